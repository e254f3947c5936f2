//! The one seam through which every kernel call (perf_event_open, read, ioctl, mmap, poll, close) passes.
#![allow(unsafe_code)]

pub(crate) mod kbase;
