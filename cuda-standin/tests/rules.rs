//! Each rule of the real driver the stand-in keeps, with the source of the rule: NVIDIA's documentation
//! (the CUDA Programming Guide, the driver API reference) or what was measured on an H200
//! (`research/cuda-trace.md`). Rules about other processes' memory run with a second process: this test
//! binary again, as `child`, which exports device memory and says its handles.

mod common;

use std::ffi::c_void;

use common::{
    alloc, handle_of, hear, hex, ok, open, range, read, say, serial, unhex, Current, Peer, ROLE,
};
use cuda_standin::api::{self, CUuuid};
use cuda_standin::memory::SUB_ALLOCATION_ALIGN;
use cuda_standin::pointer::{
    BUFFER_ID, CONTEXT, DEVICE_ORDINAL, MEMORYTYPE_DEVICE, MEMORY_TYPE, RANGE_SIZE,
    RANGE_START_ADDR,
};
use cuda_standin::result::*;

const MIB: usize = 1 << 20;

fn pattern(seed: u8, k: usize) -> u8 {
    (k as u8).wrapping_mul(31).wrapping_add(seed)
}

/// The exporting side of the tests below, chosen by `CUDA_STANDIN_TEST_ROLE`; fails when run otherwise.
#[test]
#[ignore = "the child process of the stand-in's tests"]
fn child() {
    let role = std::env::var(ROLE).expect("child runs only as the child of a stand-in test");
    if role == "uninitialised" {
        let mut count = 0;
        // SAFETY: writes one int.
        say("count", unsafe {
            api::device::cuDeviceGetCount(&mut count)
        });
        say(
            "set-current",
            api::context::cuCtxSetCurrent(std::ptr::null_mut()),
        );
        say("init", api::error::cuInit(0));
        return;
    }
    let _current = Current::new();
    match role.as_str() {
        "neighbours" => {
            // Two small allocations: one 2 MiB block.
            let a = alloc(64 << 10, |k| pattern(1, k));
            let b = alloc(64 << 10, |k| pattern(2, k));
            say("offset", b - a);
            say("range-b", format!("{:?}", range(b).unwrap()));
            say("handle", hex(&handle_of(b)));
            hear();
        }
        "realloc" => {
            let a = alloc(MIB, |_| 0xAA);
            say("handle", hex(&handle_of(a)));
            assert_eq!(hear(), "opened");
            ok("cuMemFree", api::memory::cuMemFree_v2(a));
            let b = alloc(MIB, |_| 0xBB);
            say("same-address", b == a);
            say("handle", hex(&handle_of(b)));
            hear();
        }
        "export" => {
            let a = alloc(64 * MIB, |k| pattern(3, k));
            say("handle", hex(&handle_of(a)));
            hear();
        }
        "uuids" => {
            let mut v1 = CUuuid { bytes: [0; 16] };
            let mut v2 = CUuuid { bytes: [0; 16] };
            // SAFETY: each call writes one CUuuid.
            unsafe {
                ok("v1", api::device::cuDeviceGetUuid(&mut v1, 0));
                ok("v2", api::device::cuDeviceGetUuid_v2(&mut v2, 0));
            }
            say("equal", v1.bytes == v2.bytes);
        }
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn a_call_that_needs_a_context_fails_on_a_thread_without_one() {
    // Driver API reference; reported of cuPointerGetAttribute by Open MPI and Triton.
    let _serial = serial();
    let current = Current::new();
    let ptr = alloc(4096, |k| k as u8);
    std::thread::spawn(move || {
        let mut out = 0u64;
        let mut new = 0u64;
        // SAFETY: each call writes one value of the attribute's or call's type into a local.
        unsafe {
            assert_eq!(
                api::pointer::cuPointerGetAttribute((&mut out as *mut u64).cast(), BUFFER_ID, ptr),
                INVALID_CONTEXT
            );
            let mut attribute = BUFFER_ID;
            let mut data = (&mut out as *mut u64).cast::<c_void>();
            assert_eq!(
                api::pointer::cuPointerGetAttributes(1, &mut attribute, &mut data, ptr),
                INVALID_CONTEXT
            );
            assert_eq!(api::memory::cuMemAlloc_v2(&mut new, 64), INVALID_CONTEXT);
        }
        assert_eq!(read(ptr, 16), Err(INVALID_CONTEXT));
        // Current on this thread too, the same calls work.
        ok("set current", api::context::cuCtxSetCurrent(current_ctx()));
        assert_eq!(read(ptr, 4).unwrap(), [0, 1, 2, 3]);
    })
    .join()
    .unwrap();
    ok("free", api::memory::cuMemFree_v2(ptr));
    drop(current);
}

/// Device 0's primary context handle.
fn current_ctx() -> *mut c_void {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: writes one handle; retained by the test's `Current`, so released again at once.
    unsafe {
        ok(
            "retain",
            api::context::cuDevicePrimaryCtxRetain(&mut ctx, 0),
        );
    }
    ok("release", api::context::cuDevicePrimaryCtxRelease_v2(0));
    ctx
}

#[test]
fn small_allocations_share_a_2_mib_block_that_a_handle_exposes_whole() {
    // Programming Guide: cudaMalloc may sub-allocate, and IPC then shares the whole block.
    let _serial = serial();
    let _current = Current::new();
    let mut peer = Peer::start("neighbours", &[]);
    let offset: u64 = peer.expect("offset").parse().unwrap();
    assert_eq!(offset, 64 << 10);
    // The exporter's own range is the allocation.
    assert!(peer.expect("range-b").ends_with(", 65536)"));
    let handle = unhex::<64>(&peer.expect("handle"));
    let b = open(&handle).unwrap();
    // The importer's range of the same pointer is the whole block, which starts before it.
    let (base, size) = range(b).unwrap();
    assert_eq!((b - base, size), (offset, 2 * MIB as u64));
    // And its bytes, the neighbour's included, are readable through the handle.
    let neighbour = read(base, 64 << 10).unwrap();
    assert!(neighbour
        .iter()
        .enumerate()
        .all(|(k, &v)| v == pattern(1, k)));
    let mine = read(b, 64 << 10).unwrap();
    assert!(mine.iter().enumerate().all(|(k, &v)| v == pattern(2, k)));
    // Past the block is no one's.
    assert_eq!(read(base + 2 * MIB as u64 - 8, 16), Err(INVALID_VALUE));
    ok("close", api::ipc::cuIpcCloseMemHandle(b));
    peer.tell("done");
    peer.finish();
}

#[test]
fn a_freed_buffer_made_again_has_new_handle_bytes_and_a_kept_mapping_shows_the_old_bytes() {
    // H200: B at A's address, one handle byte different; A's mapping still read 0xAA.
    let _serial = serial();
    let _current = Current::new();
    let mut peer = Peer::start("realloc", &[]);
    let a_handle = unhex::<64>(&peer.expect("handle"));
    let a = open(&a_handle).unwrap();
    peer.tell("opened");
    assert_eq!(peer.expect("same-address"), "true");
    let b_handle = unhex::<64>(&peer.expect("handle"));
    assert_ne!(a_handle, b_handle);
    assert!(read(a, MIB).unwrap().iter().all(|&v| v == 0xAA));
    let b = open(&b_handle).unwrap();
    assert_ne!(a, b);
    assert!(read(b, MIB).unwrap().iter().all(|&v| v == 0xBB));
    ok("close a", api::ipc::cuIpcCloseMemHandle(a));
    ok("close b", api::ipc::cuIpcCloseMemHandle(b));
    peer.tell("done");
    peer.finish();
}

#[test]
fn a_handle_with_byte_0_altered_opens_and_a_second_open_counts_a_reference() {
    // H200: a forged handle opened B; opening again returned the same mapping.
    let _serial = serial();
    let _current = Current::new();
    let mut peer = Peer::start("export", &[]);
    let handle = unhex::<64>(&peer.expect("handle"));
    let first = open(&handle).unwrap();
    let mut forged = handle;
    forged[0] ^= 0x5a;
    let second = open(&forged).unwrap();
    assert_eq!(first, second, "the same mapping, counted twice");
    let mut garbage = handle;
    garbage[16] ^= 1;
    assert_eq!(
        open(&garbage),
        Err(INVALID_VALUE),
        "the memfd's inode is checked"
    );
    ok("close", api::ipc::cuIpcCloseMemHandle(first));
    // One reference left: the mapping still reads.
    assert_eq!(
        read(first, 4).unwrap(),
        (0..4).map(|k| pattern(3, k)).collect::<Vec<_>>()
    );
    ok("close", api::ipc::cuIpcCloseMemHandle(second));
    assert_eq!(api::ipc::cuIpcCloseMemHandle(first), INVALID_VALUE);
    assert_eq!(read(first, 4), Err(INVALID_VALUE));
    peer.tell("done");
    peer.finish();
}

#[test]
fn a_process_cannot_open_its_own_handle() {
    let _serial = serial();
    let _current = Current::new();
    let ptr = alloc(4096, |_| 1);
    assert_eq!(open(&handle_of(ptr)), Err(INVALID_CONTEXT));
    // A handle is taken at an allocation's base only.
    let mut handle = api::CUipcMemHandle { reserved: [0; 64] };
    // SAFETY: writes the 64 handle bytes.
    let code = unsafe { api::ipc::cuIpcGetMemHandle(&mut handle, ptr + 512) };
    assert_eq!(code, INVALID_VALUE);
    ok("free", api::memory::cuMemFree_v2(ptr));
}

#[test]
fn a_copy_from_an_exporter_that_died_leaves_a_sticky_error_until_the_context_is_reset() {
    let _serial = serial();
    let _current = Current::new();
    let peer = Peer::start("export", &[]);
    let handle = unhex::<64>(&peer.expect("handle"));
    let ptr = open(&handle).unwrap();
    assert_eq!(read(ptr, 4096).unwrap()[..4], [3, 34, 65, 96]);
    peer.kill();
    assert_eq!(read(ptr, 64 * MIB), Err(ILLEGAL_ADDRESS));
    // Sticky: every later call that needs the context fails the same way.
    let mut other = 0;
    // SAFETY: writes one device address.
    let code = unsafe { api::memory::cuMemAlloc_v2(&mut other, 64) };
    assert_eq!(code, ILLEGAL_ADDRESS);
    assert_eq!(api::context::cuCtxSynchronize(), ILLEGAL_ADDRESS);
    // Until the primary context is reset, which also unmaps the block.
    ok("reset", api::context::cuDevicePrimaryCtxReset_v2(0));
    ok("sync", api::context::cuCtxSynchronize());
    assert_eq!(read(ptr, 4), Err(INVALID_VALUE));
    let fresh = alloc(64, |_| 9);
    assert_eq!(read(fresh, 2).unwrap(), [9, 9]);
}

#[test]
fn a_reset_frees_everything_made_in_the_context() {
    let _serial = serial();
    let _current = Current::new();
    let ptr = alloc(4 * MIB, |_| 1);
    ok("reset", api::context::cuDevicePrimaryCtxReset_v2(0));
    assert_eq!(read(ptr, 1), Err(INVALID_VALUE));
    assert_eq!(api::memory::cuMemFree_v2(ptr), INVALID_VALUE);
}

#[test]
fn host_registration_takes_page_aligned_ranges_only() {
    // Driver API reference: cuMemHostRegister.
    let _serial = serial();
    let _current = Current::new();
    let page = 4096;
    let mut memory = vec![0u8; 4 * page];
    let at = memory.as_mut_ptr() as usize;
    let aligned = at.div_ceil(page) * page;
    let unaligned = aligned + 8;
    assert_eq!(
        api::host::cuMemHostRegister_v2(unaligned as *mut c_void, page, 1),
        INVALID_VALUE
    );
    assert_eq!(
        api::host::cuMemHostRegister_v2(aligned as *mut c_void, page - 8, 1),
        INVALID_VALUE
    );
    ok(
        "register",
        api::host::cuMemHostRegister_v2(aligned as *mut c_void, 2 * page, 1),
    );
    assert_eq!(
        api::host::cuMemHostRegister_v2(aligned as *mut c_void, page, 1),
        HOST_MEMORY_ALREADY_REGISTERED
    );
    ok(
        "unregister",
        api::host::cuMemHostUnregister(aligned as *mut c_void),
    );
    assert_eq!(
        api::host::cuMemHostUnregister(aligned as *mut c_void),
        HOST_MEMORY_NOT_REGISTERED
    );
    drop(memory);
}

#[test]
fn uuids_v1_and_v2_differ_under_mig_only() {
    // cuDeviceGetUuid and cuDeviceGetUuid_v2 differ under MIG; cudaDeviceProp.uuid follows v2.
    let _serial = serial();
    let plain = Peer::start("uuids", &[]);
    assert_eq!(plain.expect("equal"), "true");
    plain.finish();
    let mig = Peer::start("uuids", &[(cuda_standin::device::MIG_VARIABLE, "1")]);
    assert_eq!(mig.expect("equal"), "false");
    mig.finish();
}

#[test]
fn one_attribute_call_reads_several_and_an_unknown_pointer_reads_as_zeros() {
    // Driver API reference: cuPointerGetAttributes.
    let _serial = serial();
    let current = Current::new();
    let ptr = alloc(1000, |_| 0);
    let (mut memory_type, mut id, mut ordinal) = (0u32, 0u64, -1i32);
    let (mut context, mut start, mut size) = (std::ptr::null_mut::<c_void>(), 0u64, 0usize);
    let mut attributes = [
        MEMORY_TYPE,
        BUFFER_ID,
        DEVICE_ORDINAL,
        CONTEXT,
        RANGE_START_ADDR,
        RANGE_SIZE,
    ];
    let mut data: [*mut c_void; 6] = [
        (&mut memory_type as *mut u32).cast(),
        (&mut id as *mut u64).cast(),
        (&mut ordinal as *mut i32).cast(),
        (&mut context as *mut *mut c_void).cast(),
        (&mut start as *mut u64).cast(),
        (&mut size as *mut usize).cast(),
    ];
    // SAFETY: each data pointer is writable for its attribute's type.
    let get = |data: &mut [*mut c_void; 6], attributes: &mut [u32; 6], at: u64| unsafe {
        api::pointer::cuPointerGetAttributes(6, attributes.as_mut_ptr(), data.as_mut_ptr(), at)
    };
    ok("attributes", get(&mut data, &mut attributes, ptr + 10));
    assert_eq!(
        (memory_type, ordinal, context),
        (MEMORYTYPE_DEVICE, 0, current.ctx)
    );
    assert_eq!((start, size), (ptr, 1000));
    assert_ne!(id, 0);
    let host = [0u8; 16];
    ok(
        "attributes",
        get(&mut data, &mut attributes, host.as_ptr() as u64),
    );
    assert_eq!((memory_type, id, start, size), (0, 0, 0, 0));
    let mut one = 0u32;
    // SAFETY: writes one unsigned int.
    let code = unsafe {
        api::pointer::cuPointerGetAttribute(
            (&mut one as *mut u32).cast(),
            MEMORY_TYPE,
            host.as_ptr() as u64,
        )
    };
    assert_eq!(code, INVALID_VALUE);
    ok("free", api::memory::cuMemFree_v2(ptr));
    assert_eq!(SUB_ALLOCATION_ALIGN, 512);
}

#[test]
fn calls_before_cu_init_fail_and_bad_arguments_are_refused() {
    let _serial = serial();
    let fresh = Peer::start("uninitialised", &[]);
    assert_eq!(fresh.expect("count"), NOT_INITIALIZED.to_string());
    assert_eq!(fresh.expect("set-current"), NOT_INITIALIZED.to_string());
    assert_eq!(fresh.expect("init"), SUCCESS.to_string());
    fresh.finish();
    let _current = Current::new();
    assert_eq!(api::error::cuInit(1), INVALID_VALUE);
    let mut device = 0;
    // SAFETY: writes one device ordinal; NULL is refused.
    unsafe {
        assert_eq!(api::device::cuDeviceGet(&mut device, 1), INVALID_DEVICE);
        assert_eq!(
            api::device::cuDeviceGet(std::ptr::null_mut(), 0),
            INVALID_VALUE
        );
    }
    assert_eq!(
        api::context::cuCtxSetCurrent(0x1234 as *mut c_void),
        INVALID_CONTEXT
    );
    let mut ptr = 0;
    // SAFETY: writes one device address.
    let code = unsafe { api::memory::cuMemAlloc_v2(&mut ptr, 0) };
    assert_eq!(code, INVALID_VALUE);
    assert_eq!(api::memory::cuMemFree_v2(0x10), INVALID_VALUE);
    assert_eq!(range(0x10), Err(NOT_FOUND));
    let mut name = std::ptr::null();
    // SAFETY: writes one pointer to a static string.
    unsafe {
        ok(
            "name",
            api::error::cuGetErrorName(ILLEGAL_ADDRESS, &mut name),
        );
        assert_eq!(
            std::ffi::CStr::from_ptr(name).to_str().unwrap(),
            "CUDA_ERROR_ILLEGAL_ADDRESS"
        );
        assert_eq!(api::error::cuGetErrorName(4242, &mut name), INVALID_VALUE);
        assert!(api::error::cuda_standin_calls(c"cuInit".as_ptr()) > 0);
        assert_eq!(
            api::error::cuda_standin_calls(c"cuNothing".as_ptr()),
            u64::MAX
        );
    }
}

#[test]
fn a_released_primary_context_is_destroyed_for_the_threads_it_is_current_on() {
    let _serial = serial();
    let current = Current::new();
    let ptr = alloc(4096, |_| 3);
    // The last release destroys it (and what was made in it); the thread still names it.
    ok("release", api::context::cuDevicePrimaryCtxRelease_v2(0));
    assert_eq!(read(ptr, 1), Err(CONTEXT_IS_DESTROYED));
    assert_eq!(
        api::context::cuDevicePrimaryCtxRelease_v2(0),
        INVALID_CONTEXT
    );
    // Retained again, it is a fresh context: the allocation is gone.
    let mut ctx = std::ptr::null_mut();
    // SAFETY: writes one context handle.
    let code = unsafe { api::context::cuDevicePrimaryCtxRetain(&mut ctx, 0) };
    ok("retain", code);
    assert_eq!(ctx, current.ctx);
    assert_eq!(read(ptr, 1), Err(INVALID_VALUE));
    drop(current);
}

#[test]
fn bad_arguments_of_the_other_calls_are_refused() {
    let _serial = serial();
    let _current = Current::new();
    let mut name = [0 as std::ffi::c_char; 8];
    let mut ptr = 0u64;
    let handle = api::CUipcMemHandle { reserved: [0; 64] };
    // SAFETY: each output is a local of the call's type and size, or NULL (refused).
    unsafe {
        assert_eq!(
            api::device::cuDeviceGetName(name.as_mut_ptr(), 0, 0),
            INVALID_VALUE
        );
        ok(
            "short name",
            api::device::cuDeviceGetName(name.as_mut_ptr(), 8, 0),
        );
        assert_eq!(name[7], 0, "cut to the room given, NUL-terminated");
        assert_eq!(
            api::ipc::cuIpcOpenMemHandle_v2(&mut ptr, handle, 2),
            INVALID_VALUE
        );
        assert_eq!(
            api::ipc::cuIpcOpenMemHandle_v2(std::ptr::null_mut(), handle, 1),
            INVALID_VALUE
        );
        // A handle of nothing: no such process.
        assert_eq!(
            api::ipc::cuIpcOpenMemHandle_v2(&mut ptr, handle, 1),
            INVALID_VALUE
        );
        assert_eq!(
            api::memory::cuMemcpyDtoH_v2(std::ptr::null_mut(), 0x10, 4),
            INVALID_VALUE
        );
        assert_eq!(
            api::host::cuMemAllocHost_v2(std::ptr::null_mut(), 64),
            INVALID_VALUE
        );
        assert_eq!(
            api::host::cuMemFreeHost(0x1000 as *mut c_void),
            INVALID_VALUE
        );
        assert_eq!(
            api::context::cuCtxPopCurrent_v2(std::ptr::null_mut()),
            SUCCESS
        );
        assert_eq!(
            api::context::cuCtxPopCurrent_v2(std::ptr::null_mut()),
            INVALID_CONTEXT
        );
    }
}
