/* Per-port queue state shared by ingress (admission) and egress (dequeue).
 * v1model shows the switch's queue only in egress, too late to decide
 * admission, so the program keeps its own count (AQM.md "Where the decision
 * is made"): +1 when ingress admits a packet to port p, -1 when egress sees
 * it leave the queue. */
#ifndef RATELAB_QUEUE_STATE_P4
#define RATELAB_QUEUE_STATE_P4

register<bit<32>>(MAX_PORTS) queue_length;
/* When the last packet left the queue empty (RED's idle start), in us. */
register<bit<48>>(MAX_PORTS) queue_idle_since;

#endif
