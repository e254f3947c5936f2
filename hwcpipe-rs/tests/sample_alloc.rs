//! Proves that `HwcPipe::sample()` allocates nothing in steady state: a counting global allocator
//! counts the heap allocations made by this thread while seven real software perf counters (one
//! group, read from the running kernel) are sampled many times.

#[path = "support/real_kernel.rs"]
mod real_kernel;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use hwcpipe::{CpuCounter, HwcPipe};
use real_kernel::perf_events_present;

/// Counts the allocations of each thread, then lets the system allocator do the work.
struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with` so that allocations during thread teardown are not a problem.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract is the system allocator's.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged; the caller upholds `alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged; the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; the caller upholds `dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn the_counter_counts_allocations() {
    let before = allocations();
    let v = std::hint::black_box(vec![1u8; 10]);
    assert!(allocations() > before);
    drop(v);
}

#[test]
fn sampling_allocates_nothing_in_steady_state() {
    if !perf_events_present() {
        return;
    }
    let mut pipe = HwcPipe::with_counters(&CpuCounter::SOFTWARE, &[]);
    assert_eq!(
        pipe.cpu_profiler()
            .expect("software counters")
            .available_counters(),
        CpuCounter::SOFTWARE
    );
    pipe.run().unwrap();
    for _ in 0..10 {
        pipe.sample().unwrap();
    }
    let before = allocations();
    let mut task_clock = 0;
    for _ in 0..1000 {
        let m = pipe.sample().unwrap();
        task_clock += m.cpu_value(CpuCounter::TaskClock).unwrap();
        assert_eq!(m.iter().count(), 7);
    }
    let during = allocations() - before;
    assert_eq!(during, 0, "{during} allocations in 1000 samples");
    assert!(task_clock > 0);
    pipe.stop().unwrap();
}
