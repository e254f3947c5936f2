//! The library cargo builds is NVIDIA's driver by name: its soname is `libcuda.so.1`, and it exports every
//! driver function lizard-trace looks up before its first call (`DRIVER_SYMBOLS`), so a process that finds
//! it on the loader's path uses it as it would the real driver.

use std::path::PathBuf;

use object::read::elf::ElfFile64;
use object::{elf, Endianness, Object, ObjectSymbol};

/// The shared library cargo built beside this test binary.
fn library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|d| d.join("libcuda_standin.so"))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("libcuda_standin.so not built near {}", deps.display()))
}

#[test]
fn the_library_is_libcuda_so_1_and_exports_every_function_lizard_trace_calls() {
    let data = std::fs::read(library()).unwrap();
    let file = ElfFile64::<Endianness>::parse(&*data).unwrap();
    let endian = file.endian();
    let table = file
        .elf_section_table()
        .dynamic_table(endian, &*data)
        .unwrap();
    let soname = table
        .iter()
        .find(|d| d.tag == elf::DT_SONAME)
        .map(|d| table.string(d).unwrap().to_vec())
        .expect("a soname");
    assert_eq!(soname, b"libcuda.so.1");
    let exported: Vec<String> = file
        .dynamic_symbols()
        .filter(|s| s.is_definition() && s.is_global())
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .collect();
    for name in lizard_trace::device_support::DRIVER_SYMBOLS
        .iter()
        .chain(cuda_standin::FUNCTIONS)
    {
        assert!(exported.iter().any(|e| e == name), "{name} is not exported");
    }
    assert!(exported.iter().any(|e| e == "cuda_standin_calls"));
}
