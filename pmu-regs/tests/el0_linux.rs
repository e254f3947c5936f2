//! The EL0 hardware layer on a real Linux kernel driving a real (here: QEMU-emulated) PMUv3: PMUSERENR_EL0
//! read from user space, counters read with MRS agreeing with the kernel's `read()`, and a denied read
//! reported as an error instead of trapping. Runs on aarch64 Linux with an `armv8_*` PMU in sysfs
//! (`.ci/arm-vm` boots such a system); elsewhere it says why and skips.
#![allow(unsafe_code)]

#[cfg(target_arch = "aarch64")]
mod arm {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    use pmu_regs::encoding::PmuRegister;
    use pmu_regs::hw::el0::{El0Counter, El0Pmu, El0ReadError};

    /// `PERF_TYPE_RAW`, and Arm's CPU_CYCLES and INST_RETIRED.
    const PERF_TYPE_RAW: u32 = 4;
    const CPU_CYCLES: u64 = 0x11;
    const INST_RETIRED: u64 = 0x08;
    /// `config1` of the arm64 PMU driver: bit 0 a 64-bit counter, bit 1 user-space reads (`rdpmc`).
    const CONFIG1_LONG: u64 = 1;
    const CONFIG1_RDPMC: u64 = 2;
    /// `perf_event_attr` flag bits: disabled, exclude_kernel, exclude_hv.
    const DISABLED: u64 = 1;
    const EXCLUDE_KERNEL: u64 = 1 << 5;
    const EXCLUDE_HV: u64 = 1 << 6;
    const PERF_EVENT_IOC_ENABLE: u64 = 0x2400;
    const PERF_EVENT_IOC_DISABLE: u64 = 0x2401;
    const PERF_USER_ACCESS: &str = "/proc/sys/kernel/perf_user_access";

    /// The first 64 bytes of `perf_event_attr` (`PERF_ATTR_SIZE_VER0`), through `config1`.
    #[repr(C)]
    #[derive(Default)]
    struct Attr {
        type_: u32,
        size: u32,
        config: u64,
        sample_period: u64,
        sample_type: u64,
        read_format: u64,
        flags: u64,
        wakeup_events: u32,
        bp_type: u32,
        config1: u64,
    }

    /// The head of `perf_event_mmap_page` as far as `pmc_width`.
    #[repr(C)]
    struct MmapPage {
        version: u32,
        compat_version: u32,
        lock: u32,
        index: u32,
        offset: i64,
        time_enabled: u64,
        time_running: u64,
        capabilities: u64,
        pmc_width: u16,
    }

    /// `capabilities` bit 2: `cap_user_rdpmc`.
    const CAP_USER_RDPMC: u64 = 1 << 2;

    /// A user-space-only event of this thread, opened with user access and its first page mapped.
    struct UserEvent {
        fd: OwnedFd,
        page: *mut MmapPage,
        page_size: usize,
    }

    impl UserEvent {
        fn open(config: u64, config1: u64) -> std::io::Result<UserEvent> {
            let attr = Attr {
                type_: PERF_TYPE_RAW,
                size: 64,
                config,
                flags: DISABLED | EXCLUDE_KERNEL | EXCLUDE_HV,
                config1,
                ..Attr::default()
            };
            // SAFETY: `attr` is a live 64-byte perf_event_attr whose `size` says so; the other
            // arguments are integers (this thread, any CPU, no group, no flags).
            let ret = unsafe {
                libc::syscall(
                    libc::SYS_perf_event_open,
                    &attr as *const Attr,
                    0,
                    -1,
                    -1,
                    0,
                )
            };
            if ret < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: the kernel just returned this descriptor; nothing else owns it.
            let fd = unsafe { OwnedFd::from_raw_fd(ret as i32) };
            // SAFETY: sysconf has no memory effects.
            let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
            // SAFETY: maps the event's first (metadata) page read-only; the result is checked.
            let page = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    page_size,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    fd.as_raw_fd(),
                    0,
                )
            };
            if page == libc::MAP_FAILED {
                return Err(std::io::Error::last_os_error());
            }
            Ok(UserEvent {
                fd,
                page: page.cast(),
                page_size,
            })
        }

        fn ioctl(&self, request: u64) {
            // SAFETY: ENABLE and DISABLE take an integer argument and touch no memory.
            let ret = unsafe { libc::ioctl(self.fd.as_raw_fd(), request as _, 0) };
            assert_eq!(
                ret,
                0,
                "ioctl {request:#x}: {}",
                std::io::Error::last_os_error()
            );
        }

        /// The count as the kernel's `read()` gives it.
        fn read_syscall(&self) -> u64 {
            let mut value = 0u64;
            // SAFETY: reads 8 bytes into the live local `value`.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), (&mut value as *mut u64).cast(), 8) };
            assert_eq!(n, 8, "read: {}", std::io::Error::last_os_error());
            value
        }

        /// Volatile read of the field at `offset` (from `offset_of!(MmapPage, …)`) of the page.
        fn field<T: Copy>(&self, offset: usize) -> T {
            // SAFETY: `offset` is that of a `T` field of `MmapPage`, which lies inside the page; the
            // page stays mapped for the life of `self`; the kernel updates it concurrently, hence
            // the volatile read of a plain integer.
            unsafe { std::ptr::read_volatile(self.page.cast::<u8>().add(offset).cast::<T>()) }
        }

        /// The page's `index`, `offset`, capabilities and counter width, read under its seqlock.
        fn snapshot(&self) -> (u32, i64, u64, u16) {
            use std::mem::offset_of;
            use std::sync::atomic::{compiler_fence, Ordering};
            loop {
                let seq: u32 = self.field(offset_of!(MmapPage, lock));
                compiler_fence(Ordering::SeqCst);
                let index = self.field(offset_of!(MmapPage, index));
                let offset = self.field(offset_of!(MmapPage, offset));
                let caps = self.field(offset_of!(MmapPage, capabilities));
                let width = self.field(offset_of!(MmapPage, pmc_width));
                compiler_fence(Ordering::SeqCst);
                if self.field::<u32>(offset_of!(MmapPage, lock)) == seq {
                    return (index, offset, caps, width);
                }
            }
        }

        /// The count read at EL0 through the typed layer: offset + the counter's low `pmc_width`
        /// bits sign-extended, as the perf mmap protocol defines it. `Ok(None)` when the page grants
        /// no counter.
        fn read_el0(&self, pmu: &El0Pmu) -> Result<Option<u64>, El0ReadError> {
            let (index, offset, _, width) = self.snapshot();
            let Some(counter) = El0Counter::from_perf_index(index) else {
                return Ok(None);
            };
            let raw = pmu.read(counter)?;
            let shift = 64 - u32::from(width.clamp(1, 64));
            let pmc = ((raw << shift) as i64) >> shift;
            Ok(Some(offset.wrapping_add(pmc) as u64))
        }
    }

    impl Drop for UserEvent {
        fn drop(&mut self) {
            // SAFETY: unmaps exactly the page mapped in `open`, which nothing uses any more.
            unsafe { libc::munmap(self.page.cast(), self.page_size) };
        }
    }

    /// Whether this is Linux driving a PMUv3 with its Arm PMU driver, after saying why not.
    fn arm_pmu_present() -> bool {
        let present = std::fs::read_dir("/sys/bus/event_source/devices")
            .map(|dir| {
                dir.flatten().any(|e| {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    name.starts_with("armv8_") || name.starts_with("armv9_")
                })
            })
            .unwrap_or(false);
        if !present {
            assert!(
                std::env::var_os("LIZARD_ARM_VM").is_none(),
                "the Arm VM's kernel must describe an armv8 PMU"
            );
            test_data::skip!(
                test_data::Fixture::ArmPmu,
                "no Arm PMU driven by the kernel (no armv8_* in sysfs)"
            );
        }
        present
    }

    /// Sets `kernel.perf_user_access` back to 1 when dropped, also when a test fails.
    struct RestoreUserAccess;

    impl Drop for RestoreUserAccess {
        fn drop(&mut self) {
            std::fs::write(PERF_USER_ACCESS, "1").expect("restore perf_user_access");
        }
    }

    fn user_access() -> Option<u32> {
        std::fs::read_to_string(PERF_USER_ACCESS)
            .ok()
            .and_then(|t| t.trim().parse().ok())
    }

    #[test]
    fn without_user_access_a_counter_read_is_refused_not_trapped() {
        if !arm_pmu_present() {
            return;
        }
        // SAFETY: the kernel drives a PMUv3 (checked above); only the cycle counter is named.
        let pmu = unsafe { El0Pmu::new() };
        // PMUSERENR_EL0 is per CPU and the kernel sets it when it starts the PMU for a task: with an
        // event of ours counting that was opened without user access, it is closed, whatever the
        // sysctl says and whatever ran on this CPU before.
        let event = UserEvent::open(CPU_CYCLES, 0).expect("a plain cycle event");
        event.ioctl(PERF_EVENT_IOC_ENABLE);
        assert_eq!(event.snapshot().0, 0, "no counter granted");
        let userenr = pmu.pmuserenr();
        assert!(
            !userenr.cr() && !userenr.er() && !userenr.en(),
            "{userenr:?}"
        );
        assert_eq!(
            pmu.read(El0Counter::Cycles),
            Err(El0ReadError::NotPermitted {
                register: PmuRegister::Pmccntr,
                pmuserenr: userenr
            })
        );
        let message = pmu.read(El0Counter::Cycles).unwrap_err().to_string();
        assert!(message.contains("PMCCNTR_EL0"), "{message}");
        assert_eq!(event.read_el0(&pmu), Ok(None));
        assert!(event.read_syscall() > 0, "the kernel still counts");
    }

    /// Every event counter the PE has, each holding its own INST_RETIRED, read at EL0 through
    /// `try_read` (the computed branch into the table of `PMEVCNTR<n>_EL0` reads): each value agrees
    /// with the kernel's `read()` of the event that the page says is in that counter, so that an
    /// entry of the table reading another counter's register would be caught.
    #[test]
    fn every_event_counter_is_read_from_its_own_register() {
        if !arm_pmu_present() || user_access() != Some(1) {
            test_data::skip!(
                test_data::Fixture::PerfUserAccess,
                "no Arm PMU with kernel.perf_user_access=1"
            );
            return;
        }
        // On one CPU, so that every event stays on the PMU it was given (another CPU's may have fewer
        // counters free).
        // SAFETY: a zeroed cpu_set_t with CPU 0 set, passed by pointer with its size, for this thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
        // SAFETY: PMUv3 is driven by the kernel; counters read are those the kernel's pages name.
        let pmu = unsafe { El0Pmu::new() };
        // As many events as the kernel schedules at once: the first one it cannot (its page names no
        // counter once enabled) ends the list. Different start times give each its own count.
        let mut events = Vec::new();
        for _ in 0..31 {
            let Ok(event) = UserEvent::open(INST_RETIRED, CONFIG1_RDPMC) else {
                break;
            };
            event.ioctl(PERF_EVENT_IOC_ENABLE);
            let work: u64 = (0..20_000u64).map(std::hint::black_box).sum();
            std::hint::black_box(work);
            if event.snapshot().0 == 0 {
                break;
            }
            events.push(event);
        }
        let mut indexes: Vec<u32> = events.iter().map(|e| e.snapshot().0).collect();
        eprintln!("event counters in use: {indexes:?}");
        assert!(
            events.len() >= 2,
            "at least two event counters: {indexes:?}"
        );
        for event in &events {
            let (index, offset, _, width) = event.snapshot();
            let counter = El0Counter::from_perf_index(index).expect("a counter");
            assert!(matches!(counter, El0Counter::Event(_)), "{counter:?}");
            let raw = pmu
                .try_read(counter)
                .expect("PMUSERENR_EL0 grants the read");
            let shift = 64 - u32::from(width.clamp(1, 64));
            let el0 = offset.wrapping_add(((raw << shift) as i64) >> shift) as u64;
            let kernel = event.read_syscall();
            assert!(
                el0 <= kernel && kernel - el0 < 10_000,
                "counter {index}: EL0 {el0}, read() {kernel}"
            );
        }
        indexes.sort_unstable();
        indexes.dedup();
        assert_eq!(
            indexes.len(),
            events.len(),
            "each event in a counter of its own"
        );
    }

    #[test]
    fn with_user_access_el0_reads_agree_with_the_kernel() {
        if !arm_pmu_present() {
            return;
        }
        if user_access() != Some(1) {
            assert!(
                std::env::var_os("LIZARD_ARM_VM").is_none(),
                "arm-vm boots with sysctl.kernel.perf_user_access=1"
            );
            test_data::skip!(
                test_data::Fixture::PerfUserAccess,
                "kernel.perf_user_access is not 1"
            );
            return;
        }
        // SAFETY: PMUv3 is driven by the kernel; counters read are those the kernel's pages name.
        let pmu = unsafe { El0Pmu::new() };
        // The cycle counter may be 64 bits wide; Cortex-A53/A57/A72 refuse 64-bit user access to
        // event counters, so INST_RETIRED is asked for 32 bits.
        for (name, config, config1, register_is) in [
            (
                "CPU_CYCLES",
                CPU_CYCLES,
                CONFIG1_RDPMC | CONFIG1_LONG,
                "PMCCNTR",
            ),
            ("INST_RETIRED", INST_RETIRED, CONFIG1_RDPMC, "PMEVCNTR"),
        ] {
            let event = UserEvent::open(config, config1).unwrap_or_else(|e| panic!("{name}: {e}"));
            event.ioctl(PERF_EVENT_IOC_ENABLE);
            let work: u64 = (0..100_000u64).map(std::hint::black_box).sum();
            let (index, _, caps, _) = event.snapshot();
            assert!(caps & CAP_USER_RDPMC != 0, "{name}: cap_user_rdpmc");
            let counter = El0Counter::from_perf_index(index).expect("a counter is granted");
            assert!(
                counter.register().to_string().starts_with(register_is),
                "{name}: {counter:?}"
            );
            let userenr = pmu.pmuserenr();
            assert!(userenr.el0_may_read(counter.register()), "{userenr:?}");
            let el0 = event.read_el0(&pmu).expect("granted").expect("mapped");
            let kernel = event.read_syscall();
            // Only the user-space instructions between the two reads separate them.
            assert!(
                el0 > 100_000 && el0 <= kernel && kernel - el0 < 10_000,
                "{name}: EL0 {el0}, read() {kernel}"
            );
            event.ioctl(PERF_EVENT_IOC_DISABLE);
            std::hint::black_box(work);
        }
        // With the sysctl at 0 the page grants no counter and PMUSERENR_EL0 stays closed.
        if std::fs::write(PERF_USER_ACCESS, "0").is_err() {
            test_data::skip!(
                test_data::Fixture::Root,
                "the perf_user_access=0 half: cannot write {PERF_USER_ACCESS}"
            );
            return;
        }
        let _restore = RestoreUserAccess;
        let event = UserEvent::open(CPU_CYCLES, CONFIG1_RDPMC | CONFIG1_LONG)
            .expect("the event opens without user access");
        event.ioctl(PERF_EVENT_IOC_ENABLE);
        assert_eq!(event.snapshot().0, 0, "no counter granted");
        assert_eq!(event.read_el0(&pmu), Ok(None));
        assert!(matches!(
            pmu.read(El0Counter::Cycles),
            Err(El0ReadError::NotPermitted { .. })
        ));
        assert!(event.read_syscall() > 0, "the kernel still counts");
    }
}

#[cfg(not(target_arch = "aarch64"))]
#[test]
fn el0_counter_reads_need_aarch64() {
    test_data::skip!(
        test_data::Fixture::ArmPmu,
        "the EL0 PMU layer exists on aarch64 only"
    );
}
