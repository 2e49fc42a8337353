/* Classification into a port's strict-priority queues (docs/CONTROLLER.md
 * "Priority queues"): the controller fills one exact-match table per packet
 * field, each keyed by the egress port; the packet gets the highest priority
 * any of them gives it, 0 if none hits. The priority goes to
 * standard_metadata.priority, which selects the switch's queue (simple_switch's
 * --priority-queues: the highest-numbered queue with a packet is served
 * first), and to meta.queue_index, which selects the program's own queue
 * count and RED state for that queue. Only queueing changes, never the packet. */
#ifndef RATELAB_CLASSIFY_P4
#define RATELAB_CLASSIFY_P4

control Classify(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    action set_priority(bit<3> priority) {
        meta.class_priority = priority;
    }

    table priority_protocol {
        key = {
            standard_metadata.egress_spec: exact;
            hdr.ipv4.protocol: exact;
        }
        actions = { set_priority; }
        default_action = set_priority(0);
        size = PRIORITY_TABLE_SIZE;
    }

    table priority_dscp {
        key = {
            standard_metadata.egress_spec: exact;
            meta.dscp: exact;
        }
        actions = { set_priority; }
        default_action = set_priority(0);
        size = PRIORITY_TABLE_SIZE;
    }

    /* A TCP or UDP port matches as source or destination: both directions of
     * a connection to a server port are classified alike. */
    table priority_src_port {
        key = {
            standard_metadata.egress_spec: exact;
            hdr.l4_ports.src_port: exact;
        }
        actions = { set_priority; }
        default_action = set_priority(0);
        size = PRIORITY_TABLE_SIZE;
    }

    table priority_dst_port {
        key = {
            standard_metadata.egress_spec: exact;
            hdr.l4_ports.dst_port: exact;
        }
        actions = { set_priority; }
        default_action = set_priority(0);
        size = PRIORITY_TABLE_SIZE;
    }

    apply {
        bit<3> best = 0;
        meta.dscp = hdr.ipv4.tos[7:2];
        meta.class_priority = 0;
        priority_protocol.apply();
        if (meta.class_priority > best) {
            best = meta.class_priority;
        }
        meta.class_priority = 0;
        priority_dscp.apply();
        if (meta.class_priority > best) {
            best = meta.class_priority;
        }
        if (hdr.l4_ports.isValid()) {
            meta.class_priority = 0;
            priority_src_port.apply();
            if (meta.class_priority > best) {
                best = meta.class_priority;
            }
            meta.class_priority = 0;
            priority_dst_port.apply();
            if (meta.class_priority > best) {
                best = meta.class_priority;
            }
        }
        meta.class_priority = best;
        standard_metadata.priority = best;
        meta.queue_index = (bit<32>)standard_metadata.egress_spec
                           + MAX_PORTS * (bit<32>)best;
    }
}

#endif
