//! The `renderpass` mode's gate. Counters per render pass need the GPU stopped after each render pass
//! while the counters are sampled; the one way to do that inside a command buffer recorded once is an
//! event the GPU waits for and the host sets after submission ([`crate::trap`]), which the Vulkan
//! specification forbids (host-set events must be set before the submission that waits for them) and
//! which Arm's own Mali driver honours. So the mode runs on Arm's driver, and is refused on every other
//! driver with this reason (`frame` runs instead) unless `LIZARD_VK_RENDERPASS_ANY_DRIVER=1` forces it, to
//! test the mechanism on a driver that happens to honour it too.

use crate::device::Device;

/// The variable that forces the mode on any driver.
pub(crate) const FORCE: &str = "LIZARD_VK_RENDERPASS_ANY_DRIVER";

fn forced() -> bool {
    std::env::var_os(FORCE).is_some_and(|v| v == "1")
}

/// Why the `renderpass` mode is refused on `device`, if it is.
pub(crate) fn refusal(device: &Device) -> Option<String> {
    if device.info.is_arm_driver() || forced() {
        return None;
    }
    Some(format!(
        "renderpass mode refused on {} ({}): it stops the GPU after each render pass with an event set \
         from the host after submission, which the Vulkan specification does not allow and only Arm's own \
         Mali driver honours; frame mode is used",
        device.info.name,
        device.info.driver_name()
    ))
}

/// What the trace says when the mode runs on `device`.
pub(crate) fn accepted(device: &Device) -> String {
    if device.info.is_arm_driver() {
        "renderpass mode: each workload of a primary command buffer is trapped (the GPU waits after it while \
         lizard's counters are read), on Arm's driver"
            .to_owned()
    } else {
        format!(
            "renderpass mode forced on {} by {FORCE}=1: the trap sets events from the host after submission, \
             which the Vulkan specification does not allow; its readings hold only where the driver waits \
             for them",
            device.info.name
        )
    }
}

/// Whether the `renderpass` mode runs on `device`.
pub(crate) fn available(device: &Device) -> bool {
    refusal(device).is_none()
}
