//! Gives the shared library the soname of NVIDIA's driver, `libcuda.so.1`, so that a copy of it under that
//! file name is what the loader and `dlopen("libcuda.so.1")` find.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}
