"""ducktape system tests of the kafka-compress distribution (see tests/systest.sh)."""
