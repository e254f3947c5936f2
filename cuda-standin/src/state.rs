//! The driver's state in this process, behind one lock: initialised by `cuInit`, then the device, its primary
//! context, the device address space, the blocks and allocations this process made, the mappings it opened
//! from other processes' handles, and its page-locked host memory.

use std::sync::{Mutex, MutexGuard};

use crate::address_space::AddressSpace;
use crate::context::{self, Context};
use crate::device::{Device, COUNT, TOTAL_MEMORY};
use crate::host::HostRanges;
use crate::ipc::Imports;
use crate::memory::Memory;
use crate::result::{Outcome, CONTEXT_IS_DESTROYED, INVALID_CONTEXT, NOT_INITIALIZED};

/// Everything the driver keeps for this process.
#[derive(Debug)]
pub(crate) struct State {
    /// The device.
    pub(crate) device: Device,
    /// Its primary contexts.
    pub(crate) contexts: [Context; COUNT],
    /// Device addresses.
    pub(crate) space: AddressSpace,
    /// Blocks and allocations made here.
    pub(crate) memory: Memory,
    /// Mappings of other processes' blocks.
    pub(crate) imports: Imports,
    /// Page-locked host memory.
    pub(crate) host: HostRanges,
    /// The last identity handed out (`CU_POINTER_ATTRIBUTE_BUFFER_ID`): unique per allocation, mapping and
    /// host range, never reused.
    pub(crate) last_id: u64,
}

/// The driver's state; `None` before `cuInit`.
static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Locks the state (a panic while it was held leaves it consistent: each change is one step).
fn lock() -> MutexGuard<'static, Option<State>> {
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `cuInit`: the first call makes the state; later calls do nothing.
pub(crate) fn init() -> Outcome<()> {
    let mut state = lock();
    if state.is_none() {
        *state = Some(State {
            device: Device::from_env(),
            contexts: [Context::default(); COUNT],
            space: AddressSpace::reserve(TOTAL_MEMORY)?,
            memory: Memory::default(),
            imports: Imports::default(),
            host: HostRanges::default(),
            last_id: 0,
        });
    }
    Ok(())
}

/// Runs `f` on the state; `CUDA_ERROR_NOT_INITIALIZED` before `cuInit`.
pub(crate) fn with_state<T>(f: impl FnOnce(&mut State) -> Outcome<T>) -> Outcome<T> {
    let mut guard = lock();
    let state = guard.as_mut().ok_or(NOT_INITIALIZED)?;
    f(state)
}

/// Runs `f` with the calling thread's current context, which must exist, be active and carry no sticky
/// error.
pub(crate) fn in_context<T>(f: impl FnOnce(&mut State, usize) -> Outcome<T>) -> Outcome<T> {
    with_state(|state| {
        let ctx = context::current().ok_or(INVALID_CONTEXT)?;
        state.check_usable(ctx)?;
        f(state, ctx)
    })
}

impl State {
    /// A new identity.
    pub(crate) fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    /// Whether context `ctx` can be used: active, and no sticky error.
    pub(crate) fn check_usable(&self, ctx: usize) -> Outcome<()> {
        let context = &self.contexts[ctx];
        if context.retained == 0 {
            return Err(CONTEXT_IS_DESTROYED);
        }
        match context.sticky {
            Some(code) => Err(code),
            None => Ok(()),
        }
    }

    /// Destroys everything made in context `ctx` and clears its sticky error (a reset, or its last release).
    pub(crate) fn clear_context(&mut self, ctx: usize) {
        self.memory.drop_context(&mut self.space, ctx);
        self.imports.drop_context(&mut self.space, ctx);
        self.host.drop_context(ctx);
        self.contexts[ctx].sticky = None;
    }
}
