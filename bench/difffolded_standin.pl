#!/usr/bin/perl -w
# A stand-in for FlameGraph's difffolded.pl when it is not installed, for bench/diff.sh only:
# written again from its rules (tests/cli/difffolded_rules.py), with the same shape of data
# (a hash of stacks, each a hash of two counts), so its time and memory are the script's.
use strict;
my ($norm, $strip) = (0, 0);
while (@ARGV && $ARGV[0] =~ /^-([ns]+)$/) { my $o = $1; $norm = 1 if $o =~ /n/; $strip = 1 if $o =~ /s/; shift; }
my %h; my @t = (0, 0);
for my $k (1, 2) {
	open(my $f, '<', $ARGV[$k - 1]) or die;
	while (my $l = <$f>) {
		chomp $l;
		my ($s, $c) = ($l =~ /^(.*)\s+?(\d+(?:\.\d*)?)$/);
		$s =~ s/0x[0-9a-fA-F]+/0x.../g if $strip;
		$h{$s}{$k} += $c; $t[$k - 1] += $c;
	}
}
for my $s (keys %h) {
	my $a = $h{$s}{1} // 0; my $b = $h{$s}{2} // 0;
	$a = int($a * $t[1] / $t[0]) if $norm && $t[0] != $t[1];
	print "$s $a $b\n";
}
