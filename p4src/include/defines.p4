/* ratelab router: every tunable, each with a default that -D can override.
 * docs/ROUTER_MODEL.md explains what each one bounds. */
#ifndef RATELAB_DEFINES_P4
#define RATELAB_DEFINES_P4

/* Ports 0 .. MAX_PORTS-1 may be configured (per-port registers and counters). */
#ifndef MAX_PORTS
#define MAX_PORTS 64
#endif

/* Strict-priority queues a port may have (simple_switch's --priority-queues
 * allows 8): the per-queue registers are indexed port + MAX_PORTS * queue. */
#ifndef MAX_QUEUES
#define MAX_QUEUES 8
#endif

/* ABT slots shared by all ports; a power of two (RBCC.md). */
#ifndef ABT_SLOTS
#define ABT_SLOTS 1024
#endif

/* Entries of the RED idle-decay table per port; m is clamped to DECAY_LEN - 1. */
#ifndef DECAY_LEN
#define DECAY_LEN 16384
#endif

/* Defaults of the router_config table's default action (the controller may change them). */
#ifndef IDLE_TIMEOUT_US
#define IDLE_TIMEOUT_US 1000000
#endif
#ifndef MIN_RATE
#define MIN_RATE 1500
#endif
#ifndef ROUTER_ID
#define ROUTER_ID 0
#endif

/* Table sizes. */
#ifndef LPM_TABLE_SIZE
#define LPM_TABLE_SIZE 4096
#endif
/* Entries of each classification table (priority_*), all ports together. */
#ifndef PRIORITY_TABLE_SIZE
#define PRIORITY_TABLE_SIZE 1024
#endif
#ifndef DECAY_TABLE_SIZE
#define DECAY_TABLE_SIZE 262144
#endif

/* Replaces a zero RED seed (xorshift would stay at zero). Same as the model. */
#define RED_ZERO_SEED 0x9E3779B9

/* There is no CPU port: the router neither punts nor injects packets. */

#endif
