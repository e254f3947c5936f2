//! Keeping the layer's library loaded when one of its threads could not be stopped in time: the loader
//! closes the library after the last `vkDestroyInstance`, and a thread still running its code would then
//! run unmapped memory.

/// Marks the layer's library never to be unloaded (`RTLD_NODELETE`): it stays mapped after the loader
/// closes it.
pub(crate) fn keep_loaded() {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    let address = keep_loaded as *const libc::c_void;
    // SAFETY: `address` is code of this library; `info` is ours to fill.
    if unsafe { libc::dladdr(address, &mut info) } == 0 || info.dli_fname.is_null() {
        return;
    }
    // SAFETY: the library's own path, NUL-terminated by the dynamic linker; RTLD_NOLOAD only takes another
    // reference to the loaded library, and RTLD_NODELETE keeps it mapped for the process's life.
    let handle = unsafe {
        libc::dlopen(
            info.dli_fname,
            libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
        )
    };
    // The reference is kept on purpose: the library stays.
    let _ = handle;
}
