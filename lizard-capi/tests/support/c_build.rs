//! Building and running the C programs of the tests against the `liblizard.so` cargo built: the compilers
//! (native, cross, or programs compiled ahead of time, see `prebuilt.rs`), the library's folder, a scratch
//! folder per test process, and the tools that check the programs (valgrind, the sanitizers).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::prebuilt;

/// The crate's folder: `LIZARD_CAPI_DIR` when set (a test binary run on another machine than the one that
/// built it), else where cargo built it.
pub fn manifest() -> PathBuf {
    std::env::var_os("LIZARD_CAPI_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// The folder holding `liblizard.so`: `LIZARD_LIBRARY_DIR` when set (a build for a target where cargo
/// makes no shared library beside static test binaries), else where cargo builds it beside this test
/// binary (`deps/`), or the profile folder above, where `cargo build` copies it.
pub fn library_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("LIZARD_LIBRARY_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("test binary folder");
    let found = [Some(deps), deps.parent()]
        .into_iter()
        .flatten()
        .find(|dir| dir.join("liblizard.so").exists())
        .unwrap_or_else(|| panic!("liblizard.so not built near {}", deps.display()))
        .to_path_buf();
    found
}

/// A folder for this test process's programs.
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("lizard-capi-c-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    })
}

/// The C or C++ compiler: `TARGET_CC` / `TARGET_CXX` when cross-compiling, else gcc / g++.
#[derive(Clone, Copy)]
pub enum Lang {
    /// C99.
    C,
    /// C++11.
    Cxx,
}

impl Lang {
    /// The compiler.
    pub fn compiler(self) -> String {
        let (var, native) = match self {
            Lang::C => ("TARGET_CC", "gcc"),
            Lang::Cxx => ("TARGET_CXX", "g++"),
        };
        std::env::var(var).unwrap_or_else(|_| native.to_owned())
    }
}

/// The cross compiler in use, or the folder of programs compiled elsewhere, if any: valgrind and the
/// sanitizers, which check native builds only, are then skipped.
pub fn cross_compiler() -> Option<String> {
    std::env::var("TARGET_CC")
        .ok()
        .or_else(|| prebuilt::folder().map(|dir| format!("programs from {}", dir.display())))
}

/// Compiles `source` as `lang` with `extra` flags, warnings as errors.
pub fn compile(lang: Lang, source: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = scratch().join(name);
    let (lang_flag, std) = match lang {
        Lang::Cxx => ("c++", "-std=c++11"),
        Lang::C => ("c", "-std=c99"),
    };
    if let Some(program) = prebuilt::program(source, lang_flag) {
        assert!(
            extra.is_empty(),
            "no prebuilt variant of {name} with {extra:?}"
        );
        return program;
    }
    let compiler = lang.compiler();
    let lib = library_dir();
    let status = Command::new(&compiler)
        .args([std, "-Wall", "-Wextra", "-Werror", "-g", "-x", lang_flag])
        .arg(source)
        .arg("-I")
        .arg(manifest().join("include"))
        .args(extra)
        .arg("-L")
        .arg(&lib)
        .args(["-llizard", "-ldl"])
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(
        status.success(),
        "{compiler} failed on {}",
        source.display()
    );
    out
}

/// The loader's search path for the C programs: the folder of the library this test built first (cargo's
/// own `LD_LIBRARY_PATH` also lists the profile folder, which may hold an older build), then every folder
/// of `existing`, so that what the environment put there — the CUDA driver's folder — stays found.
pub fn search_path_with(first: &Path, existing: Option<std::ffi::OsString>) -> std::ffi::OsString {
    let mut path = first.as_os_str().to_owned();
    if let Some(existing) = existing.filter(|e| !e.is_empty()) {
        path.push(":");
        path.push(existing);
    }
    path
}

/// [`search_path_with`] of [`library_dir`] and this process's `LD_LIBRARY_PATH`.
pub fn search_path() -> std::ffi::OsString {
    search_path_with(&library_dir(), std::env::var_os("LD_LIBRARY_PATH"))
}

/// Runs `program` (under `wrapper`, if any) with the library this test built first on the search path
/// ([`search_path`]).
pub fn run(program: &Path, wrapper: &[&str], args: &[String]) -> Output {
    run_with(program, wrapper, args, &[])
}

/// [`run`] with extra environment variables.
pub fn run_with(program: &Path, wrapper: &[&str], args: &[String], env: &[(&str, &str)]) -> Output {
    let mut command = match wrapper.split_first() {
        Some((tool, tool_args)) => {
            let mut c = Command::new(tool);
            c.args(tool_args).arg(program);
            c
        }
        None => Command::new(program),
    };
    let output = command
        .args(args)
        .envs(env.iter().copied())
        .env("LD_LIBRARY_PATH", search_path())
        .output()
        .expect("run C program");
    if !output.status.success() {
        eprintln!("stdout:\n{}", String::from_utf8_lossy(&output.stdout));
        eprintln!("stderr:\n{}", String::from_utf8_lossy(&output.stderr));
    }
    output
}

/// Whether `tool` runs here; its absence is a skip (a failure where
/// `LIZARD_REQUIRE_FIXTURES` requires it: `.ci/run` installs it).
pub fn tool_available(tool: &str) -> bool {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        let fixture = match tool {
            "valgrind" => test_data::Fixture::Valgrind,
            _ => test_data::Fixture::Cc,
        };
        test_data::skip!(fixture, "{tool} is not installed");
    }
    found
}
