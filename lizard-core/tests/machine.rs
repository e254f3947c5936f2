//! `Machine`: what a capture ran on, read from `/proc` and `/sys` (a scratch tree here, and this machine).

use lizard_core::Machine;

/// A scratch tree removed when dropped.
struct Tree(std::path::PathBuf);

impl Tree {
    fn new(name: &str) -> Tree {
        let dir =
            std::env::temp_dir().join(format!("lizard-machine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Tree(dir)
    }

    fn file(&self, path: &str, text: &str) -> &Tree {
        let path = self.0.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn an_arm_machine_is_named_by_its_kernel_and_cores() {
    let tree = Tree::new("arm");
    tree.file("proc/sys/kernel/hostname", "board\n")
        .file("proc/sys/kernel/ostype", "Linux\n")
        .file("proc/sys/kernel/osrelease", "6.1.0-13-arm64\n")
        .file("sys/devices/system/cpu/online", "0-1,3\n")
        .file(
            "sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
            "0x00000000410fd034\n",
        )
        .file(
            "sys/devices/system/cpu/cpu1/regs/identification/midr_el1",
            "0x00000000410fd034\n",
        )
        .file(
            "sys/devices/system/cpu/cpu3/regs/identification/midr_el1",
            "0x00000000410fd083\n",
        );
    let m = Machine::under(&tree.0);
    assert_eq!(m.host.as_deref(), Some("board"));
    assert_eq!(m.kernel.as_deref(), Some("Linux 6.1.0-13-arm64"));
    assert_eq!(m.online_cpus, [0, 1, 3]);
    assert_eq!(
        m.midr,
        [(0, 0x410f_d034), (1, 0x410f_d034), (3, 0x410f_d083)]
    );
    assert_eq!(m.cpu_model, None);
}

#[test]
fn what_cannot_be_read_is_left_out() {
    let tree = Tree::new("bare");
    tree.file(
        "proc/cpuinfo",
        "processor\t: 0\nmodel name\t: Some CPU @ 2GHz\n",
    )
    .file("sys/devices/system/cpu/online", "not a list\n")
    .file("proc/sys/kernel/hostname", "\n");
    let m = Machine::under(&tree.0);
    assert_eq!((m.host, m.kernel), (None, None));
    assert!(m.online_cpus.is_empty() && m.midr.is_empty());
    assert_eq!(m.cpu_model.as_deref(), Some("Some CPU @ 2GHz"));
    assert_eq!(m.arch, std::env::consts::ARCH);
}

#[test]
fn this_machine_has_a_kernel_and_cpus() {
    let m = Machine::this();
    assert!(
        m.kernel.as_deref().is_some_and(|k| k.starts_with("Linux ")),
        "{m:?}"
    );
    assert!(!m.online_cpus.is_empty(), "{m:?}");
}
