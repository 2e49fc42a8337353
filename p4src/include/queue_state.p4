/* Per-port queue state shared by ingress (admission) and egress (dequeue).
 * v1model shows the switch's queue only in egress, too late to decide
 * admission, so the program keeps its own count (AQM.md "Where the decision
 * is made"): +1 when ingress admits a packet to port p, -1 when egress sees
 * it leave the queue. One count per strict-priority queue: index
 * port + MAX_PORTS * queue (classify.p4), the port itself for queue 0. */
#ifndef RATELAB_QUEUE_STATE_P4
#define RATELAB_QUEUE_STATE_P4

register<bit<32>>(MAX_PORTS * MAX_QUEUES) queue_length;
/* When the last packet left the queue empty (RED's idle start), in us. */
register<bit<48>>(MAX_PORTS * MAX_QUEUES) queue_idle_since;

#endif
