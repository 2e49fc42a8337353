//! The fast path allocates nothing: once warmed up, in-order data packets,
//! their ACKs and the application taking the delivered data make no heap
//! allocation (counted by a global allocator, on this thread only).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use rbcc_host::{Receiver, Sender, SenderConfig};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn in_order_data_and_acks_allocate_nothing_per_packet() {
    let mut config = SenderConfig::new(125_000_000, 125_000_000, Some(20_000), None);
    config.flow_id = 5;
    let mut sender = Sender::new(config, 0).unwrap();
    let mut receiver = Receiver::new(5);
    let mut datagram = Vec::with_capacity(2048);
    let mut ack = Vec::with_capacity(2048);
    let mut packets = 0u64;
    let mut steady_start = None;
    while let Some(now) = sender.poll_at() {
        if packets >= 1_000 && steady_start.is_none() {
            steady_start = Some((allocations(), packets));
        }
        let mut sent = false;
        sender
            .on_timer(now, |d| {
                datagram.clear();
                datagram.extend_from_slice(d);
                sent = true;
            })
            .unwrap();
        if !sent {
            continue;
        }
        if let Some(a) = receiver.on_datagram(now, &datagram) {
            ack.clear();
            ack.extend_from_slice(a);
            sender.on_datagram(now, &ack).unwrap();
        }
        receiver.take_delivered(|_, payload| assert_eq!(payload.len(), 932));
        packets += 1;
        if packets == 19_000 {
            break;
        }
    }
    let (before, from) = steady_start.expect("the warm-up ended");
    assert_eq!(packets - from, 18_000);
    assert_eq!(allocations() - before, 0, "allocations on the fast path");
}
