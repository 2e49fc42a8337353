"""ratelab controller: configures routers over P4Runtime and polls their counters."""
