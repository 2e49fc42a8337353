# Reference model: regenerate or check the shared test vectors (tests/vectors/).
# `make test` already checks them through pytest (model/tests/test_vectors.py).
.PHONY: vectors vectors-check

vectors: deps
	$(PY) -m ratelab_model.vectors --write

vectors-check: deps
	$(PY) -m ratelab_model.vectors --check
