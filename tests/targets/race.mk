# make -j2: the recipes of a and b both read-modify-write ./count, so one
# update can be lost; `all` checks the count (tests/integration, issue9).
.PHONY: all a b init
all: a b
	@test "$$(cat count)" = 2 || { echo "lost update: count $$(cat count)"; exit 1; }
a b: init
	@n=$$(cat count); echo $$((n + 1)) > count
init:
	@echo 0 > count
