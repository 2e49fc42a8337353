/* Queue admission at egress port p: RED (if enabled) then the queue limit.
 * The integer steps are docs/ROUTER_MODEL.md "RED", step for step.
 * Each strict-priority queue of a port (classify.p4) is admitted on its own:
 * queue state, RED average, count and random state are indexed by the
 * queue's index qi (= p on queue 0), with the port's limit and RED
 * parameters, as simple_switch gives every priority queue the port's depth;
 * the drop counters and the decay table stay per port. */
#ifndef RATELAB_AQM_P4
#define RATELAB_AQM_P4

const bit<2> ADMIT = 0;
const bit<2> DROP_QUEUE_FULL = 1;
const bit<2> DROP_RED_EARLY = 2;
const bit<2> DROP_RED_FORCED = 3;

control QueueAdmission(inout metadata_t meta, in bit<32> p, in bit<32> qi,
                       in bit<48> now, out bit<2> decision) {
    register<bit<32>>(MAX_PORTS * MAX_QUEUES) red_avg;          /* Q16.16 packets */
    /* count + 1 (mod 2^32): the register's initial 0 is the model's count = -1 */
    register<bit<32>>(MAX_PORTS * MAX_QUEUES) red_count_plus1;
    /* xorshift state; 0 = not yet seeded from port_config */
    register<bit<32>>(MAX_PORTS * MAX_QUEUES) red_rng;
    /* Gauges for the controller: q and avg seen by the last arrival. */
    register<bit<32>>(MAX_PORTS * MAX_QUEUES) last_q;
    register<bit<32>>(MAX_PORTS * MAX_QUEUES) last_avg;

    counter(MAX_PORTS, CounterType.packets) drop_queue_full;
    counter(MAX_PORTS, CounterType.packets) drop_red_early;
    counter(MAX_PORTS, CounterType.packets) drop_red_forced;

    action set_decay(bit<32> value) {
        meta.decay = value;
    }

    /* decay[m] per port; the controller installs every entry that is not 0. */
    table red_decay {
        key = {
            meta.decay_port: exact;
            meta.decay_m: exact;
        }
        actions = { set_decay; }
        default_action = set_decay(0);
        size = DECAY_TABLE_SIZE;
    }

    apply {
        bit<32> q;
        bit<32> avg;
        queue_length.read(q, qi);
        red_avg.read(avg, qi);
        decision = ADMIT;

        if (meta.port.red_enabled == 1) {
            if (q > 0) {
                bit<64> target = (bit<64>)q << 16;
                if (target >= (bit<64>)avg) {
                    avg = avg + (bit<32>)(((target - (bit<64>)avg) * (bit<64>)meta.port.wq16) >> 16);
                } else {
                    avg = avg - (bit<32>)((((bit<64>)avg - target) * (bit<64>)meta.port.wq16) >> 16);
                }
            } else {
                bit<48> idle_since;
                queue_idle_since.read(idle_since, qi);
                bit<48> idle = now - idle_since;
                bit<64> idle32 = (idle > 0xFFFFFFFF) ? 64w0xFFFFFFFF : (bit<64>)idle;
                bit<64> m = (idle32 * (bit<64>)meta.port.s_recip) >> 32;
                if (m > DECAY_LEN - 1) {
                    m = DECAY_LEN - 1;
                }
                meta.decay_port = p;
                meta.decay_m = (bit<32>)m;
                red_decay.apply();
                avg = (bit<32>)(((bit<64>)avg * (bit<64>)meta.decay) >> 16);
            }
            red_avg.write(qi, avg);

            bit<32> count1;
            red_count_plus1.read(count1, qi);
            if (avg < meta.port.th_min16) {
                count1 = 0;
            } else if (avg >= meta.port.th_max16) {
                count1 = 1;
                decision = DROP_RED_FORCED;
            } else {
                /* count += 1: the new count is the old count + 1 = count1 */
                bit<64> count = (bit<64>)count1;
                count1 = count1 + 1;
                bit<64> pb16 = ((bit<64>)(avg - meta.port.th_min16) * meta.port.slope) >> 32;
                bit<64> c = count * pb16;
                if (c >= 65536) {
                    count1 = 1;
                    decision = DROP_RED_EARLY;
                } else {
                    bit<32> rng;
                    red_rng.read(rng, qi);
                    if (rng == 0) {
                        rng = (meta.port.seed == 0) ? RED_ZERO_SEED : meta.port.seed;
                    }
                    rng = rng ^ (rng << 13);
                    rng = rng ^ (rng >> 17);
                    rng = rng ^ (rng << 5);
                    red_rng.write(qi, rng);
                    if ((bit<64>)rng * (65536 - c) < (pb16 << 32)) {
                        count1 = 1;
                        decision = DROP_RED_EARLY;
                    }
                }
            }
            red_count_plus1.write(qi, count1);
        }

        if (decision == ADMIT && q >= meta.port.queue_limit) {
            decision = DROP_QUEUE_FULL;
        }
        last_q.write(qi, q);
        last_avg.write(qi, avg);

        if (decision == ADMIT) {
            queue_length.write(qi, q + 1);
        } else if (decision == DROP_QUEUE_FULL) {
            drop_queue_full.count(p);
        } else if (decision == DROP_RED_EARLY) {
            drop_red_early.count(p);
        } else {
            drop_red_forced.count(p);
        }
    }
}

#endif
