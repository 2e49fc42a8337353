/* ratelab router (P4_16, v1model): IPv4 forwarding, classification into
 * strict-priority queues, queue admission (FIFO or RED per queue), RBCC rate
 * stamping with the ABT, per-port counters.
 *
 * The reference model (model/ratelab_model) defines correct behaviour and
 * docs/ROUTER_MODEL.md maps its state to the tables, registers and counters
 * below. Pipeline, all in ingress once the egress port is known:
 * forwarding -> classification -> queue admission -> RBCC (admitted RBCC
 * packets only). */

#include <core.p4>
#include <v1model.p4>

#include "include/defines.p4"
#include "include/headers.p4"
#include "include/parser.p4"
#include "include/queue_state.p4"
#include "include/classify.p4"
#include "include/aqm.p4"
#include "include/rbcc.p4"

control RouterIngress(inout headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    /* Forwarding counters, indexed by the ingress port. */
    counter(MAX_PORTS, CounterType.packets) packets_in;
    counter(MAX_PORTS, CounterType.packets) drop_not_ipv4;
    counter(MAX_PORTS, CounterType.packets) drop_malformed;
    counter(MAX_PORTS, CounterType.packets) drop_bad_checksum;
    counter(MAX_PORTS, CounterType.packets) drop_ttl_expired;
    counter(MAX_PORTS, CounterType.packets) drop_no_route;

    Classify() classify;
    QueueAdmission() admission;
    Rbcc() rbcc;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    action set_router(bit<32> router_id, bit<32> min_rate, bit<48> idle_timeout_us) {
        meta.router_id = router_id;
        meta.min_rate = min_rate;
        meta.idle_timeout_us = idle_timeout_us;
    }

    /* Router-wide settings: a keyless table whose default action the controller sets. */
    table router_config {
        key = { }
        actions = { set_router; }
        default_action = set_router(ROUTER_ID, MIN_RATE, IDLE_TIMEOUT_US);
        size = 1;
    }

    action set_next_hop(bit<9> port, bit<48> dst_mac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dst_addr = dst_mac;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm; }
        actions = { set_next_hop; drop; }
        default_action = drop();
        size = LPM_TABLE_SIZE;
    }

    action set_port(bit<48> mac, bit<32> rbcc_capacity, bit<32> queue_limit,
                    bit<1> red_enabled, bit<32> wq16, bit<32> th_min16, bit<32> th_max16,
                    bit<64> slope, bit<32> s_recip, bit<32> seed) {
        meta.port.mac = mac;
        meta.port.rbcc_capacity = rbcc_capacity;
        meta.port.queue_limit = queue_limit;
        meta.port.red_enabled = red_enabled;
        meta.port.wq16 = wq16;
        meta.port.th_min16 = th_min16;
        meta.port.th_max16 = th_max16;
        meta.port.slope = slope;
        meta.port.s_recip = s_recip;
        meta.port.seed = seed;
    }

    /* One entry per configured egress port; a next hop on a port without an
     * entry is a controller error and its packets are dropped uncounted. */
    table port_config {
        key = { standard_metadata.egress_spec: exact; }
        actions = { set_port; drop; }
        default_action = drop();
        size = MAX_PORTS;
    }

    apply {
        bit<32> in_port = (bit<32>)standard_metadata.ingress_port;
        packets_in.count(in_port);

        /* Forwarding checks, first failure wins (docs/ROUTER_MODEL.md "Forwarding").
         * A frame that ends inside the TCP/UDP ports is not malformed: the model
         * does not read them, only classification does (it then misses). */
        if (standard_metadata.parser_error != error.NoError
            && !(standard_metadata.parser_error == error.PacketTooShort && meta.l4_expected == 1)) {
            drop_malformed.count(in_port);
            drop();
            return;
        }
        if (!hdr.ipv4.isValid()) {
            drop_not_ipv4.count(in_port);
            drop();
            return;
        }
        bit<32> header_len = (bit<32>)hdr.ipv4.ihl << 2;
        bit<32> total_len = (bit<32>)hdr.ipv4.total_len;
        if (total_len < header_len || total_len > standard_metadata.packet_length - 14
            || (hdr.rbcc.isValid() && total_len < header_len + 24)) {
            drop_malformed.count(in_port);
            drop();
            return;
        }
        if (standard_metadata.checksum_error == 1) {
            drop_bad_checksum.count(in_port);
            drop();
            return;
        }
        if (hdr.ipv4.ttl <= 1) {
            drop_ttl_expired.count(in_port);
            drop();
            return;
        }
        if (!ipv4_lpm.apply().hit) {
            drop_no_route.count(in_port);
            return;
        }
        if (!port_config.apply().hit) {
            return;
        }
        router_config.apply();
        hdr.ethernet.src_addr = meta.port.mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;

        bit<32> p = (bit<32>)standard_metadata.egress_spec;
        bit<48> now = standard_metadata.ingress_global_timestamp;
        classify.apply(hdr, meta, standard_metadata);
        bit<2> decision;
        admission.apply(meta, p, meta.queue_index, now, decision);
        if (decision != ADMIT) {
            drop();
            return;
        }
        if (hdr.rbcc.isValid() && hdr.rbcc.version == RBCC_VERSION) {
            rbcc.apply(hdr, meta, p, now);
        }
    }
}

control RouterEgress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    /* packets_out and bytes_out of AQM.md "Counters". */
    counter(MAX_PORTS, CounterType.packets_and_bytes) port_out;

    apply {
        /* Egress runs when the packet leaves its queue (meta.queue_index, set
         * in ingress, travels with it through the traffic manager). */
        bit<32> p = (bit<32>)standard_metadata.egress_port;
        bit<32> qi = meta.queue_index;
        bit<32> q;
        queue_length.read(q, qi);
        queue_length.write(qi, q - 1);
        if (q == 1) {
            queue_idle_since.write(qi, standard_metadata.egress_global_timestamp);
        }
        port_out.count(p);
    }
}

V1Switch(RouterParser(), RouterVerifyChecksum(), RouterIngress(), RouterEgress(),
         RouterComputeChecksum(), RouterDeparser()) main;
