//! After a warm-up, data packets, their ACKs and the application's copies
//! make no heap allocation (a counting global allocator).

use ratelab_stack::tcp::{Config, Connection, State};
use ratelab_stack::testbed::{A, B};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One round: A sends what its window allows, B takes and reads it, B's ACKs go back.
fn round(
    a: &mut Connection,
    b: &mut Connection,
    now: &mut u64,
    wire: &mut [[u8; 2048]],
    chunk: &[u8],
    sink: &mut [u8],
) -> usize {
    while a.send(chunk) > 0 {}
    let mut lens = [0usize; 256];
    let mut n = 0;
    while n < wire.len() {
        match a.poll_transmit(*now, &mut wire[n]) {
            Some(t) => lens[n] = t.len,
            None => break,
        }
        n += 1;
    }
    *now += 50_000;
    for k in 0..n {
        b.handle_segment(*now, A.addr, &wire[k][..lens[k]]);
        while b.recv(sink) > 0 {}
    }
    let mut m = 0;
    while m < wire.len() {
        match b.poll_transmit(*now, &mut wire[m]) {
            Some(t) => lens[m] = t.len,
            None => break,
        }
        m += 1;
    }
    *now += 50_000;
    for k in 0..m {
        a.handle_segment(*now, B.addr, &wire[k][..lens[k]]);
    }
    n
}

#[test]
fn data_path_does_not_allocate() {
    let cfg = Config {
        send_buffer: 256 * 1024,
        recv_buffer: 256 * 1024,
        ..Config::default()
    };
    let mut a = Connection::connect(cfg.clone(), A, B, 1, 0).unwrap();
    let mut b = Connection::listen(cfg, B, 2, 0).unwrap();
    let mut wire = vec![[0u8; 2048]; 256];
    let chunk = vec![1u8; 16 * 1024];
    let mut sink = vec![0u8; 64 * 1024];
    let mut now = 0;
    for _ in 0..60 {
        round(&mut a, &mut b, &mut now, &mut wire, &chunk, &mut sink);
    }
    assert_eq!(a.state(), State::Established);
    let before = ALLOCS.load(Ordering::Relaxed);
    let sent_before = a.stats().segments_sent;
    for _ in 0..100 {
        round(&mut a, &mut b, &mut now, &mut wire, &chunk, &mut sink);
    }
    let packets = a.stats().segments_sent - sent_before;
    assert!(packets > 10_000, "{packets}");
    assert_eq!(
        ALLOCS.load(Ordering::Relaxed) - before,
        0,
        "allocations during {packets} data packets"
    );
}
