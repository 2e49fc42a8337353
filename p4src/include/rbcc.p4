/* RBCC at egress port p for an admitted RBCC packet: RBCC.md "Per packet"
 * steps 1-5 with the ABT as parallel register arrays. docs/ROUTER_MODEL.md
 * "RBCC" lists the decisions (eviction strictly after idle_timeout; the
 * stamp uses the aggregates after this packet's update; inserts count as
 * updates too; an eviction's removal is counted at the evicted flow's port;
 * a flow recorded as limited is stamped with the share it would get here,
 * Amendment 1). */
#ifndef RATELAB_RBCC_P4
#define RATELAB_RBCC_P4

control Rbcc(inout headers_t hdr, inout metadata_t meta, in bit<32> p, in bit<48> now) {
    /* The ABT: one entry per slot. */
    register<bit<1>>(ABT_SLOTS)  abt_valid;
    register<bit<32>>(ABT_SLOTS) abt_src;
    register<bit<32>>(ABT_SLOTS) abt_dst;
    register<bit<16>>(ABT_SLOTS) abt_port;
    register<bit<32>>(ABT_SLOTS) abt_rate;
    register<bit<1>>(ABT_SLOTS)  abt_limited;
    register<bit<48>>(ABT_SLOTS) abt_last_seen;
    /* Aggregates per port. */
    register<bit<32>>(MAX_PORTS) agg_n;
    register<bit<32>>(MAX_PORTS) agg_n_limited;
    register<bit<64>>(MAX_PORTS) agg_sum_limited;

    counter(MAX_PORTS, CounterType.packets) rbcc_packets;
    counter(MAX_PORTS, CounterType.packets) abt_hits;
    counter(MAX_PORTS, CounterType.packets) abt_updates;
    counter(MAX_PORTS, CounterType.packets) abt_inserts;
    counter(MAX_PORTS, CounterType.packets) abt_removals;
    counter(MAX_PORTS, CounterType.packets) abt_collisions;

    action set_recip(bit<64> value) {
        meta.recip = value;
    }

    /* recip[k] = floor(2^32 / k) for 1 <= k <= ABT_SLOTS (P4 cannot divide). */
    table recip {
        key = { meta.recip_k: exact; }
        actions = { set_recip; }
        default_action = set_recip(0);
        size = ABT_SLOTS;
    }

    apply {
        rbcc_packets.count(p);
        bit<16> port16 = (bit<16>)p;
        bit<32> slot;
        hash(slot, HashAlgorithm.crc32, 32w0,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, port16 }, (bit<32>)ABT_SLOTS);

        bit<1> valid;
        bit<32> s_src;
        bit<32> s_dst;
        bit<16> s_port;
        bit<32> s_rate;
        bit<1> s_limited;
        bit<48> s_last_seen;
        abt_valid.read(valid, slot);
        abt_src.read(s_src, slot);
        abt_dst.read(s_dst, slot);
        abt_port.read(s_port, slot);
        abt_rate.read(s_rate, slot);
        abt_limited.read(s_limited, slot);
        abt_last_seen.read(s_last_seen, slot);

        /* Step 1: find or claim the slot. */
        bool held = valid == 1 && s_src == hdr.ipv4.src_addr
                    && s_dst == hdr.ipv4.dst_addr && s_port == port16;
        bool collision = false;
        bool claim = valid == 0;
        if (valid == 1 && !held) {
            if (now - s_last_seen <= meta.idle_timeout_us) {
                collision = true;
            } else {
                /* Evict the stale flow from its own port's aggregates. */
                bit<32> old = (bit<32>)s_port;
                bit<32> old_n;
                agg_n.read(old_n, old);
                agg_n.write(old, old_n - 1);
                if (s_limited == 1) {
                    bit<32> old_nl;
                    bit<64> old_sum;
                    agg_n_limited.read(old_nl, old);
                    agg_sum_limited.read(old_sum, old);
                    agg_n_limited.write(old, old_nl - 1);
                    agg_sum_limited.write(old, old_sum - (bit<64>)s_rate);
                }
                abt_removals.count(old);
                claim = true;
            }
        }

        bit<32> n;
        bit<32> n_limited;
        bit<64> sum_limited;
        agg_n.read(n, p);
        agg_n_limited.read(n_limited, p);
        agg_sum_limited.read(sum_limited, p);
        bit<1> limited = (hdr.rbcc.return_bottle_node != meta.router_id) ? 1w1 : 1w0;
        bit<32> recorded = s_rate;

        if (collision) {
            abt_collisions.count(p);
        } else {
            if (claim) {
                n = n + 1;
                abt_inserts.count(p);
            }
            /* Steps 2 and 3: the cache check. */
            if (held && s_limited == limited
                && (limited == 0 || s_rate == hdr.rbcc.current_rate)) {
                abt_hits.count(p);
                abt_last_seen.write(slot, now);
            } else {
                abt_updates.count(p);
                if (held && s_limited == 1) {
                    n_limited = n_limited - 1;
                    sum_limited = sum_limited - (bit<64>)s_rate;
                }
                if (limited == 1) {
                    n_limited = n_limited + 1;
                    sum_limited = sum_limited + (bit<64>)hdr.rbcc.current_rate;
                }
                recorded = hdr.rbcc.current_rate;
                abt_valid.write(slot, 1);
                abt_src.write(slot, hdr.ipv4.src_addr);
                abt_dst.write(slot, hdr.ipv4.dst_addr);
                abt_port.write(slot, port16);
                abt_rate.write(slot, recorded);
                abt_limited.write(slot, limited);
                abt_last_seen.write(slot, now);
            }
        }

        /* Step 4 (RBCC.md, Amendment 1): the share this flow would get here.
         * A flow whose slot holds limited = 1 leaves the limited set (its
         * recorded rate out of the sum, itself among the sharers); any other
         * packet gets the port's plain share. Either way one recip lookup. */
        bool own = !collision && limited == 1;
        bit<64> rest = own ? sum_limited - (bit<64>)recorded : sum_limited;
        bit<32> sharers = own ? n - n_limited + 1 : n - n_limited;
        bit<64> capacity = (bit<64>)meta.port.rbcc_capacity;
        bool room = capacity > rest;
        bit<32> k = room ? sharers : n;
        meta.recip_k = (k == 0) ? 32w1 : k;
        recip.apply();
        bit<64> share64 = room ? ((capacity - rest) * meta.recip) >> 32
                               : (capacity * meta.recip) >> 32;
        bit<32> share = (bit<32>)share64;
        if (share < meta.min_rate) {
            share = meta.min_rate;
        }
        if (share < hdr.rbcc.rate) {
            hdr.rbcc.rate = share;
            hdr.rbcc.bottle_node = meta.router_id;
        }

        /* Step 5: FIN frees the slot after stamping. */
        if (!collision && (hdr.rbcc.flags & RBCC_FLAG_FIN) != 0) {
            abt_valid.write(slot, 0);
            n = n - 1;
            if (limited == 1) {
                n_limited = n_limited - 1;
                sum_limited = sum_limited - (bit<64>)recorded;
            }
            abt_removals.count(p);
        }
        if (!collision) {
            agg_n.write(p, n);
            agg_n_limited.write(p, n_limited);
            agg_sum_limited.write(p, sum_limited);
        }
    }
}

#endif
