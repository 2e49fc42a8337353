"""Bit-exact reference model of the ratelab router: the judge of correct behaviour."""
