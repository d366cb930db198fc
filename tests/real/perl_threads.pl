# Perl ithreads: two workers take numbers from a Thread::Queue and add
# them to a shared total under lock(); `racy`: read, yield, write without
# the lock (a lost update, found).  tests/real/test_real.c
use strict; use warnings;
use threads; use threads::shared; use Thread::Queue;
my $racy = @ARGV && $ARGV[0] eq 'racy';
my $n :shared = 0;
my $q = Thread::Queue->new();
my @t = map { threads->create(sub {
	while (defined(my $x = $q->dequeue())) {
		if ($racy) { my $v = $n; threads->yield(); $n = $v + $x; }
		else { lock($n); $n += $x; }
	}
}) } 1..2;
$q->enqueue(1..4);
$q->end();
$_->join() for @t;
print "sum $n\n";
exit($n == 10 ? 0 : 1);
