# Controller (ratelab-ctl): its tests run with the Python suite (control_plane/tests);
# `make test` also validates the example configuration that `make run` uses.
TEST_TARGETS += ctl-check-example

.PHONY: ctl-check-example
ctl-check-example: deps
	$(PY) -m ratelab_ctl check control_plane/examples/router.yaml
