//! Kernel calls of the Mali kbase driver: open, ioctl, mmap, poll.
