# A `make check` of four test programs, one racy (tests/integration
# test_suite_mode.c): make -f check.mk check T=TARGETS_DIR
check:
	$(T)/bank_locked
	$(T)/plain_inc_fixed_O0
	$(T)/treiber_ok
	$(T)/bank_nolock
