//! The `renderpass` mode's gate. Counters per render pass need the GPU stopped after each render pass
//! while the counters are sampled; the one way to do that inside a command buffer recorded once is an
//! event the GPU waits for and the host sets after submission, which the Vulkan specification forbids
//! (host-set events must be set before the submission that waits for them) and which works only on Arm's
//! own driver. So the mode is refused on every other driver, with this reason, and `frame` is used.

use crate::device::Device;

/// Why the `renderpass` mode is refused on `device`, if it is.
pub(crate) fn refusal(device: &Device) -> Option<String> {
    if device.info.is_arm_driver() {
        return Some(
            "renderpass mode: this build does not trap render passes yet; frame mode is used"
                .to_owned(),
        );
    }
    Some(format!(
        "renderpass mode refused on {} ({}): it stops the GPU after each render pass with an event set \
         from the host after submission, which the Vulkan specification does not allow and only Arm's own \
         Mali driver honours; frame mode is used",
        device.info.name,
        device.info.driver_name()
    ))
}

/// Whether the `renderpass` mode runs on `device`.
pub(crate) fn available(device: &Device) -> bool {
    refusal(device).is_none()
}
