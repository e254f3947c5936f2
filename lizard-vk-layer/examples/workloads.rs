//! A Vulkan application of the layer's own, on `ash`, for what vkcube does not do: secondary command
//! buffers (one continuing a render pass, one holding a dispatch), dynamic rendering, compute, copies, a
//! blit and a clear, debug labels, a command buffer recorded once and submitted many times (through
//! `vkQueueSubmit` and `vkQueueSubmit2` in turn), and a `SIMULTANEOUS_USE` command buffer pending twice in
//! one submission. It renders offscreen (no window, no present) and checks its own results: the compute
//! shader's values and the rendered pixel, so a layer that changed what the application does fails it.
//!
//! ```sh
//! cargo run -p lizard-vk-layer --example workloads -- --submits 20 --cycles 1
//! ```
//!
//! `--cycles N` creates and destroys the instance and device N times in one process (the loader loads and
//! unloads the layers each time). `--exit-without-destroy` ends the process after its checks (and a
//! quarter of a second), without destroying anything, as most applications end. `--invalid` also submits the once-recorded command buffer twice in one
//! submission without `SIMULTANEOUS_USE`, which the Khronos validation layer reports: the tests use it to
//! show that a validation run would see an error.
//!
//! What it records, per submission of the once-recorded command buffer (labels in brackets):
//! - [frame work > main pass] a render pass, one draw of one triangle covering the 64×64 image;
//! - [frame work] a render pass whose contents are a secondary command buffer with two such draws;
//! - [frame work > dynamic] dynamic rendering, one such draw;
//! - [frame work > compute] a dispatch of 16 workgroups of 4 invocations;
//! - [frame work] a secondary command buffer executed outside render passes, with a dispatch of 16
//!   workgroups;
//! - [frame work] a buffer copy, a blit, a clear and an image-to-buffer copy.
//!
//! And once, a `SIMULTANEOUS_USE` command buffer [simultaneous] (a dispatch of 8 workgroups and a buffer
//! fill) submitted twice in one batch.

use std::ffi::CStr;
use std::process::ExitCode;

use ash::vk;

const SIZE: u32 = 64;
const FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

type Error = Box<dyn std::error::Error>;

struct Args {
    cycles: u32,
    submits: u32,
    invalid: bool,
    exit_without_destroy: bool,
}

fn args() -> Result<Args, Error> {
    let mut args = Args {
        cycles: 1,
        submits: 10,
        invalid: false,
        exit_without_destroy: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--cycles" => args.cycles = it.next().ok_or("--cycles N")?.parse()?,
            "--submits" => args.submits = it.next().ok_or("--submits N")?.parse()?,
            "--invalid" => args.invalid = true,
            "--exit-without-destroy" => args.exit_without_destroy = true,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if args.submits == 0 || args.cycles == 0 {
        return Err("--submits and --cycles take a positive number".into());
    }
    Ok(args)
}

fn main() -> ExitCode {
    let result = args().and_then(|args| {
        let entry = loader()?;
        for cycle in 0..args.cycles {
            run(&entry, &args).map_err(|e| format!("cycle {cycle}: {e}"))?;
        }
        Ok(())
    });
    match result {
        Ok(()) => {
            println!("workloads: ok");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("workloads: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The system's Vulkan loader (`libvulkan.so.1`), opened as applications open it, and its
/// `vkGetInstanceProcAddr` as ash's entry.
fn loader() -> Result<ash::Entry, Error> {
    // SAFETY: opens a shared library by name; it stays loaded for the process's life.
    let library = unsafe {
        libc::dlopen(
            c"libvulkan.so.1".as_ptr(),
            libc::RTLD_NOW | libc::RTLD_LOCAL,
        )
    };
    if library.is_null() {
        return Err("libvulkan.so.1 not found (Debian: libvulkan1)".into());
    }
    // SAFETY: the library's exported symbol, by name.
    let symbol = unsafe { libc::dlsym(library, c"vkGetInstanceProcAddr".as_ptr()) };
    if symbol.is_null() {
        return Err("libvulkan.so.1 has no vkGetInstanceProcAddr".into());
    }
    // SAFETY: the loader's vkGetInstanceProcAddr, of that type.
    let get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr =
        unsafe { std::mem::transmute::<*mut libc::c_void, vk::PFN_vkGetInstanceProcAddr>(symbol) };
    // SAFETY: a valid vkGetInstanceProcAddr of the loader.
    Ok(unsafe {
        ash::Entry::from_static_fn(ash::StaticFn {
            get_instance_proc_addr,
        })
    })
}

/// SPIR-V words of a shader compiled from `examples/shaders` (by `glslangValidator -V`).
fn spirv(bytes: &[u8]) -> Result<Vec<u32>, Error> {
    Ok(ash::util::read_spv(&mut std::io::Cursor::new(bytes))?)
}

/// The index of a memory type of `bits` with `flags`.
fn memory_type(
    properties: &vk::PhysicalDeviceMemoryProperties,
    bits: u32,
    flags: vk::MemoryPropertyFlags,
) -> Result<u32, Error> {
    (0..properties.memory_type_count)
        .find(|&i| {
            bits & (1 << i) != 0
                && properties.memory_types[i as usize]
                    .property_flags
                    .contains(flags)
        })
        .ok_or_else(|| "no suitable memory type".into())
}

/// Everything one cycle creates, destroyed in `Drop`.
struct App {
    instance: ash::Instance,
    device: ash::Device,
    labels: Option<ash::ext::debug_utils::Device>,
    memory: vk::PhysicalDeviceMemoryProperties,
    images: Vec<(vk::Image, vk::DeviceMemory)>,
    buffers: Vec<(vk::Buffer, vk::DeviceMemory)>,
    views: Vec<vk::ImageView>,
    render_pass: vk::RenderPass,
    framebuffer: vk::Framebuffer,
    modules: Vec<vk::ShaderModule>,
    layouts: Vec<vk::PipelineLayout>,
    set_layout: vk::DescriptorSetLayout,
    descriptor_pool: vk::DescriptorPool,
    pipelines: Vec<vk::Pipeline>,
    pool: vk::CommandPool,
    fence: vk::Fence,
}

impl Drop for App {
    fn drop(&mut self) {
        // SAFETY: every object below was created by this app on this device; the device is idle first.
        unsafe {
            let _ = self.device.device_wait_idle();
            let d = &self.device;
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None);
            for p in &self.pipelines {
                d.destroy_pipeline(*p, None);
            }
            d.destroy_descriptor_pool(self.descriptor_pool, None);
            for l in &self.layouts {
                d.destroy_pipeline_layout(*l, None);
            }
            d.destroy_descriptor_set_layout(self.set_layout, None);
            for m in &self.modules {
                d.destroy_shader_module(*m, None);
            }
            d.destroy_framebuffer(self.framebuffer, None);
            d.destroy_render_pass(self.render_pass, None);
            for v in &self.views {
                d.destroy_image_view(*v, None);
            }
            for (i, m) in &self.images {
                d.destroy_image(*i, None);
                d.free_memory(*m, None);
            }
            for (b, m) in &self.buffers {
                d.destroy_buffer(*b, None);
                d.free_memory(*m, None);
            }
            d.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

impl App {
    fn image(&mut self, usage: vk::ImageUsageFlags) -> Result<vk::Image, Error> {
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(FORMAT)
            .extent(vk::Extent3D {
                width: SIZE,
                height: SIZE,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: a valid create info on a live device; memory bound below before use.
        unsafe {
            let image = self.device.create_image(&info, None)?;
            let req = self.device.get_image_memory_requirements(image);
            let alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(memory_type(
                    &self.memory,
                    req.memory_type_bits,
                    vk::MemoryPropertyFlags::empty(),
                )?);
            let memory = self.device.allocate_memory(&alloc, None)?;
            self.device.bind_image_memory(image, memory, 0)?;
            self.images.push((image, memory));
            Ok(image)
        }
    }

    fn buffer(&mut self, size: u64, usage: vk::BufferUsageFlags) -> Result<vk::Buffer, Error> {
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: a valid create info on a live device; host-visible memory bound below.
        unsafe {
            let buffer = self.device.create_buffer(&info, None)?;
            let req = self.device.get_buffer_memory_requirements(buffer);
            let alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(memory_type(
                    &self.memory,
                    req.memory_type_bits,
                    vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
                )?);
            let memory = self.device.allocate_memory(&alloc, None)?;
            self.device.bind_buffer_memory(buffer, memory, 0)?;
            self.buffers.push((buffer, memory));
            Ok(buffer)
        }
    }

    /// The host's view of buffer `index`'s memory, `words` u32 values.
    fn read(&self, index: usize, words: usize) -> Result<Vec<u32>, Error> {
        let memory = self.buffers[index].1;
        // SAFETY: host-visible coherent memory of a buffer of at least `words` values, not in use by the GPU
        // (the queue is idle); unmapped before returning.
        unsafe {
            let p = self.device.map_memory(
                memory,
                0,
                (words * 4) as u64,
                vk::MemoryMapFlags::empty(),
            )? as *const u32;
            let values = std::slice::from_raw_parts(p, words).to_vec();
            self.device.unmap_memory(memory);
            Ok(values)
        }
    }

    fn shader(&mut self, words: &[u32]) -> Result<vk::ShaderModule, Error> {
        let info = vk::ShaderModuleCreateInfo::default().code(words);
        // SAFETY: valid SPIR-V from glslangValidator.
        let module = unsafe { self.device.create_shader_module(&info, None) }?;
        self.modules.push(module);
        Ok(module)
    }

    fn label(&self, cb: vk::CommandBuffer, name: &CStr) {
        if let Some(labels) = &self.labels {
            let label = vk::DebugUtilsLabelEXT::default().label_name(name);
            // SAFETY: a recording command buffer; VK_EXT_debug_utils is enabled.
            unsafe { labels.cmd_begin_debug_utils_label(cb, &label) };
        }
    }

    fn end_label(&self, cb: vk::CommandBuffer) {
        if let Some(labels) = &self.labels {
            // SAFETY: closes the label opened in the same command buffer.
            unsafe { labels.cmd_end_debug_utils_label(cb) };
        }
    }
}

fn barrier(
    device: &ash::Device,
    cb: vk::CommandBuffer,
    image: vk::Image,
    from: vk::ImageLayout,
    to: vk::ImageLayout,
) {
    let b = vk::ImageMemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
        .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE)
        .old_layout(from)
        .new_layout(to)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: 0,
            level_count: 1,
            base_array_layer: 0,
            layer_count: 1,
        });
    // SAFETY: a recording command buffer outside render passes; the image is the app's.
    unsafe {
        device.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &[b],
        )
    };
}

fn memory_barrier(device: &ash::Device, cb: vk::CommandBuffer) {
    let b = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
        .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE);
    // SAFETY: a recording command buffer outside render passes.
    unsafe {
        device.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::DependencyFlags::empty(),
            &[b],
            &[],
            &[],
        )
    };
}

fn run(entry: &ash::Entry, args: &Args) -> Result<(), Error> {
    // SAFETY: queries of the loader.
    let available = unsafe { entry.enumerate_instance_extension_properties(None) }?;
    let has_labels = available
        .iter()
        .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::debug_utils::NAME));
    let extensions: Vec<*const std::ffi::c_char> = if has_labels {
        vec![ash::ext::debug_utils::NAME.as_ptr()]
    } else {
        Vec::new()
    };
    let app_info = vk::ApplicationInfo::default()
        .application_name(c"lizard-vk-layer workloads")
        .api_version(vk::API_VERSION_1_3);
    let info = vk::InstanceCreateInfo::default()
        .application_info(&app_info)
        .enabled_extension_names(&extensions);
    // SAFETY: a valid create info.
    let instance = unsafe { entry.create_instance(&info, None) }?;
    // SAFETY: queries of a live instance.
    let physical = unsafe { instance.enumerate_physical_devices() }?
        .into_iter()
        .next()
        .ok_or("no Vulkan device")?;
    // SAFETY: as above.
    let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
    let family = families
        .iter()
        .position(|f| {
            f.queue_flags
                .contains(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)
        })
        .ok_or("no graphics and compute queue")? as u32;
    let priorities = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(family)
        .queue_priorities(&priorities)];
    // Features as modern applications give them: VkPhysicalDeviceFeatures2 first in the chain.
    let mut vulkan13 = vk::PhysicalDeviceVulkan13Features::default()
        .dynamic_rendering(true)
        .synchronization2(true);
    let mut features2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut vulkan13);
    let device_info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .push_next(&mut features2);
    // SAFETY: a valid create info for this physical device.
    let device = unsafe { instance.create_device(physical, &device_info, None) }?;
    // SAFETY: as above.
    let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
    let labels = has_labels.then(|| ash::ext::debug_utils::Device::new(&instance, &device));
    // SAFETY: the queue created with the device.
    let queue = unsafe { device.get_device_queue(family, 0) };
    let pool_info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(family)
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    // SAFETY: valid create infos on a live device.
    let (pool, fence) = unsafe {
        (
            device.create_command_pool(&pool_info, None)?,
            device.create_fence(&vk::FenceCreateInfo::default(), None)?,
        )
    };
    let mut app = App {
        instance,
        device,
        labels,
        memory,
        images: Vec::new(),
        buffers: Vec::new(),
        views: Vec::new(),
        render_pass: vk::RenderPass::null(),
        framebuffer: vk::Framebuffer::null(),
        modules: Vec::new(),
        layouts: Vec::new(),
        set_layout: vk::DescriptorSetLayout::null(),
        descriptor_pool: vk::DescriptorPool::null(),
        pipelines: Vec::new(),
        pool,
        fence,
    };
    let color = app.image(
        vk::ImageUsageFlags::COLOR_ATTACHMENT
            | vk::ImageUsageFlags::TRANSFER_SRC
            | vk::ImageUsageFlags::TRANSFER_DST,
    )?;
    let target =
        app.image(vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST)?;
    let values = app.buffer(
        256 * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST,
    )?;
    let copied = app.buffer(256 * 4, vk::BufferUsageFlags::TRANSFER_DST)?;
    let pixels = app.buffer(
        u64::from(SIZE * SIZE * 4),
        vk::BufferUsageFlags::TRANSFER_DST,
    )?;
    let device = app.device.clone();
    let view_info = vk::ImageViewCreateInfo::default()
        .image(color)
        .view_type(vk::ImageViewType::TYPE_2D)
        .format(FORMAT)
        .subresource_range(vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: 0,
            level_count: 1,
            base_array_layer: 0,
            layer_count: 1,
        });
    // SAFETY: a view of the app's image.
    let view = unsafe { device.create_image_view(&view_info, None) }?;
    app.views.push(view);

    let attachment = [vk::AttachmentDescription::default()
        .format(FORMAT)
        .samples(vk::SampleCountFlags::TYPE_1)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .initial_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
        .final_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)];
    let reference = [vk::AttachmentReference {
        attachment: 0,
        layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
    }];
    let subpass = [vk::SubpassDescription::default()
        .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
        .color_attachments(&reference)];
    let rp_info = vk::RenderPassCreateInfo::default()
        .attachments(&attachment)
        .subpasses(&subpass);
    // SAFETY: a valid render pass on a live device.
    app.render_pass = unsafe { device.create_render_pass(&rp_info, None) }?;
    let views = [view];
    let fb_info = vk::FramebufferCreateInfo::default()
        .render_pass(app.render_pass)
        .attachments(&views)
        .width(SIZE)
        .height(SIZE)
        .layers(1);
    // SAFETY: as above.
    app.framebuffer = unsafe { device.create_framebuffer(&fb_info, None) }?;

    let vert = app.shader(&spirv(include_bytes!("shaders/triangle.vert.spv"))?)?;
    let frag = app.shader(&spirv(include_bytes!("shaders/green.frag.spv"))?)?;
    let comp = app.shader(&spirv(include_bytes!("shaders/fill.comp.spv"))?)?;
    // SAFETY: an empty layout.
    let graphics_layout =
        unsafe { device.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default(), None) }?;
    app.layouts.push(graphics_layout);
    let binding = [vk::DescriptorSetLayoutBinding::default()
        .binding(0)
        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
        .descriptor_count(1)
        .stage_flags(vk::ShaderStageFlags::COMPUTE)];
    // SAFETY: valid create infos.
    app.set_layout = unsafe {
        device.create_descriptor_set_layout(
            &vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding),
            None,
        )
    }?;
    let set_layouts = [app.set_layout];
    // SAFETY: as above.
    let compute_layout = unsafe {
        device.create_pipeline_layout(
            &vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts),
            None,
        )
    }?;
    app.layouts.push(compute_layout);
    let sizes = [vk::DescriptorPoolSize {
        ty: vk::DescriptorType::STORAGE_BUFFER,
        descriptor_count: 1,
    }];
    // SAFETY: as above.
    app.descriptor_pool = unsafe {
        device.create_descriptor_pool(
            &vk::DescriptorPoolCreateInfo::default()
                .max_sets(1)
                .pool_sizes(&sizes),
            None,
        )
    }?;
    // SAFETY: one set from the pool above.
    let set = unsafe {
        device.allocate_descriptor_sets(
            &vk::DescriptorSetAllocateInfo::default()
                .descriptor_pool(app.descriptor_pool)
                .set_layouts(&set_layouts),
        )
    }?[0];
    let buffer_info = [vk::DescriptorBufferInfo {
        buffer: values,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let write = [vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(0)
        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
        .buffer_info(&buffer_info)];
    // SAFETY: the set above, its buffer alive.
    unsafe { device.update_descriptor_sets(&write, &[]) };

    // Two graphics pipelines: one for the render pass, one for dynamic rendering.
    let stages = [
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::VERTEX)
            .module(vert)
            .name(c"main"),
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::FRAGMENT)
            .module(frag)
            .name(c"main"),
    ];
    let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
    let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
        .topology(vk::PrimitiveTopology::TRIANGLE_LIST);
    let viewport = vk::PipelineViewportStateCreateInfo::default()
        .viewport_count(1)
        .scissor_count(1);
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(vk::CullModeFlags::NONE)
        .line_width(1.0);
    let multisample = vk::PipelineMultisampleStateCreateInfo::default()
        .rasterization_samples(vk::SampleCountFlags::TYPE_1);
    let blend_attachment = [vk::PipelineColorBlendAttachmentState::default()
        .color_write_mask(vk::ColorComponentFlags::RGBA)];
    let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachment);
    let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
    let formats = [FORMAT];
    let mut rendering =
        vk::PipelineRenderingCreateInfo::default().color_attachment_formats(&formats);
    let base = vk::GraphicsPipelineCreateInfo::default()
        .stages(&stages)
        .vertex_input_state(&vertex_input)
        .input_assembly_state(&assembly)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .color_blend_state(&blend)
        .dynamic_state(&dynamic)
        .layout(graphics_layout);
    let infos = [
        base.render_pass(app.render_pass).subpass(0),
        base.push_next(&mut rendering),
    ];
    // SAFETY: valid pipeline create infos.
    let graphics =
        unsafe { device.create_graphics_pipelines(vk::PipelineCache::null(), &infos, None) }
            .map_err(|(_, e)| e)?;
    app.pipelines.extend(&graphics);
    let compute_info = [vk::ComputePipelineCreateInfo::default()
        .stage(
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(comp)
                .name(c"main"),
        )
        .layout(compute_layout)];
    // SAFETY: as above.
    let compute =
        unsafe { device.create_compute_pipelines(vk::PipelineCache::null(), &compute_info, None) }
            .map_err(|(_, e)| e)?[0];
    app.pipelines.push(compute);

    let allocate = |level: vk::CommandBufferLevel, n: u32| {
        // SAFETY: command buffers from the app's pool.
        unsafe {
            device.allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .level(level)
                    .command_buffer_count(n),
            )
        }
    };
    let primaries = allocate(vk::CommandBufferLevel::PRIMARY, 2)?;
    let secondaries = allocate(vk::CommandBufferLevel::SECONDARY, 2)?;
    let (frame_cb, simultaneous_cb) = (primaries[0], primaries[1]);
    let (draws_cb, dispatch_cb) = (secondaries[0], secondaries[1]);
    let area = vk::Rect2D {
        offset: vk::Offset2D { x: 0, y: 0 },
        extent: vk::Extent2D {
            width: SIZE,
            height: SIZE,
        },
    };
    let full_viewport = [vk::Viewport {
        x: 0.0,
        y: 0.0,
        width: SIZE as f32,
        height: SIZE as f32,
        min_depth: 0.0,
        max_depth: 1.0,
    }];
    let set_view = |cb: vk::CommandBuffer| {
        // SAFETY: a recording command buffer with a graphics pipeline bound.
        unsafe {
            device.cmd_set_viewport(cb, 0, &full_viewport);
            device.cmd_set_scissor(cb, 0, &[area]);
        }
    };

    // SAFETY: each command buffer below is recorded once, by this thread, with valid commands; every
    // handle is the app's own and alive.
    unsafe {
        // The secondary continuing a render pass: two draws.
        let inheritance = vk::CommandBufferInheritanceInfo::default()
            .render_pass(app.render_pass)
            .subpass(0)
            .framebuffer(app.framebuffer);
        device.begin_command_buffer(
            draws_cb,
            &vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE)
                .inheritance_info(&inheritance),
        )?;
        device.cmd_bind_pipeline(draws_cb, vk::PipelineBindPoint::GRAPHICS, graphics[0]);
        set_view(draws_cb);
        device.cmd_draw(draws_cb, 3, 1, 0, 0);
        device.cmd_draw(draws_cb, 3, 1, 0, 0);
        device.end_command_buffer(draws_cb)?;

        // The secondary outside render passes: a dispatch.
        let no_render_pass = vk::CommandBufferInheritanceInfo::default();
        device.begin_command_buffer(
            dispatch_cb,
            &vk::CommandBufferBeginInfo::default().inheritance_info(&no_render_pass),
        )?;
        device.cmd_bind_pipeline(dispatch_cb, vk::PipelineBindPoint::COMPUTE, compute);
        device.cmd_bind_descriptor_sets(
            dispatch_cb,
            vk::PipelineBindPoint::COMPUTE,
            compute_layout,
            0,
            &[set],
            &[],
        );
        device.cmd_dispatch(dispatch_cb, 16, 1, 1);
        device.end_command_buffer(dispatch_cb)?;

        // The primary recorded once and submitted every time.
        let cb = frame_cb;
        device.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())?;
        barrier(
            &device,
            cb,
            color,
            vk::ImageLayout::UNDEFINED,
            vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
        );
        app.label(cb, c"frame work");
        let clear = [vk::ClearValue {
            color: vk::ClearColorValue {
                float32: [0.0, 0.0, 0.0, 1.0],
            },
        }];
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(app.render_pass)
            .framebuffer(app.framebuffer)
            .render_area(area)
            .clear_values(&clear);
        app.label(cb, c"main pass");
        device.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
        device.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, graphics[0]);
        set_view(cb);
        device.cmd_draw(cb, 3, 1, 0, 0);
        device.cmd_end_render_pass(cb);
        app.end_label(cb);
        device.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::SECONDARY_COMMAND_BUFFERS);
        device.cmd_execute_commands(cb, &[draws_cb]);
        device.cmd_end_render_pass(cb);
        app.label(cb, c"dynamic");
        let color_attachment = [vk::RenderingAttachmentInfo::default()
            .image_view(view)
            .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::LOAD)
            .store_op(vk::AttachmentStoreOp::STORE)];
        let rendering_info = vk::RenderingInfo::default()
            .render_area(area)
            .layer_count(1)
            .color_attachments(&color_attachment);
        device.cmd_begin_rendering(cb, &rendering_info);
        device.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, graphics[1]);
        set_view(cb);
        device.cmd_draw(cb, 3, 1, 0, 0);
        device.cmd_end_rendering(cb);
        app.end_label(cb);
        app.label(cb, c"compute");
        device.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, compute);
        device.cmd_bind_descriptor_sets(
            cb,
            vk::PipelineBindPoint::COMPUTE,
            compute_layout,
            0,
            &[set],
            &[],
        );
        device.cmd_dispatch(cb, 16, 1, 1);
        app.end_label(cb);
        memory_barrier(&device, cb);
        device.cmd_execute_commands(cb, &[dispatch_cb]);
        memory_barrier(&device, cb);
        device.cmd_copy_buffer(
            cb,
            values,
            copied,
            &[vk::BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size: 256 * 4,
            }],
        );
        barrier(
            &device,
            cb,
            color,
            vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
        );
        barrier(
            &device,
            cb,
            target,
            vk::ImageLayout::UNDEFINED,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        );
        let layers = vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        };
        let corners = [
            vk::Offset3D { x: 0, y: 0, z: 0 },
            vk::Offset3D {
                x: SIZE as i32,
                y: SIZE as i32,
                z: 1,
            },
        ];
        device.cmd_blit_image(
            cb,
            color,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            target,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            &[vk::ImageBlit {
                src_subresource: layers,
                src_offsets: corners,
                dst_subresource: layers,
                dst_offsets: corners,
            }],
            vk::Filter::NEAREST,
        );
        memory_barrier(&device, cb);
        device.cmd_clear_color_image(
            cb,
            target,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            &vk::ClearColorValue {
                float32: [1.0, 0.0, 0.0, 1.0],
            },
            &[vk::ImageSubresourceRange {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                base_mip_level: 0,
                level_count: 1,
                base_array_layer: 0,
                layer_count: 1,
            }],
        );
        device.cmd_copy_image_to_buffer(
            cb,
            color,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            pixels,
            &[vk::BufferImageCopy {
                buffer_offset: 0,
                buffer_row_length: 0,
                buffer_image_height: 0,
                image_subresource: layers,
                image_offset: vk::Offset3D { x: 0, y: 0, z: 0 },
                image_extent: vk::Extent3D {
                    width: SIZE,
                    height: SIZE,
                    depth: 1,
                },
            }],
        );
        app.end_label(cb);
        device.end_command_buffer(cb)?;

        // The SIMULTANEOUS_USE primary: a dispatch and a fill.
        let cb = simultaneous_cb;
        device.begin_command_buffer(
            cb,
            &vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE),
        )?;
        app.label(cb, c"simultaneous");
        device.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, compute);
        device.cmd_bind_descriptor_sets(
            cb,
            vk::PipelineBindPoint::COMPUTE,
            compute_layout,
            0,
            &[set],
            &[],
        );
        device.cmd_dispatch(cb, 8, 1, 1);
        memory_barrier(&device, cb);
        device.cmd_fill_buffer(cb, copied, 0, 256 * 4, 7);
        app.end_label(cb);
        device.end_command_buffer(cb)?;

        // The once-recorded command buffer, submitted `submits` times, alternately through vkQueueSubmit
        // and vkQueueSubmit2; the application waits for each (it is not SIMULTANEOUS_USE).
        for i in 0..args.submits {
            if i % 2 == 0 {
                let cbs = [frame_cb];
                let submit = vk::SubmitInfo::default().command_buffers(&cbs);
                device.queue_submit(queue, &[submit], app.fence)?;
            } else {
                let cbs = [vk::CommandBufferSubmitInfo::default().command_buffer(frame_cb)];
                let submit = vk::SubmitInfo2::default().command_buffer_infos(&cbs);
                device.queue_submit2(queue, &[submit], app.fence)?;
            }
            device.wait_for_fences(&[app.fence], true, 10_000_000_000)?;
            device.reset_fences(&[app.fence])?;
        }
        // The SIMULTANEOUS_USE command buffer pending twice in one batch.
        let cbs = [simultaneous_cb, simultaneous_cb];
        let submit = vk::SubmitInfo::default().command_buffers(&cbs);
        device.queue_submit(queue, &[submit], app.fence)?;
        device.wait_for_fences(&[app.fence], true, 10_000_000_000)?;
        device.reset_fences(&[app.fence])?;
        device.queue_wait_idle(queue)?;
    }

    // What the application itself checks: the compute values and the rendered pixel.
    let values = app.read(0, 64)?;
    for (i, v) in values.iter().enumerate() {
        if *v != i as u32 * 3 {
            return Err(format!("compute value {i} is {v}, not {}", i * 3).into());
        }
    }
    let pixels = app.read(2, (SIZE * SIZE) as usize)?;
    let centre = pixels[(SIZE * SIZE / 2 + SIZE / 2) as usize];
    if centre != 0xff00ff00 {
        return Err(format!("the rendered pixel is {centre:#010x}, not opaque green").into());
    }
    let fill = app.read(1, 4)?;
    if fill != [7, 7, 7, 7] {
        return Err(format!("the filled buffer holds {fill:?}").into());
    }
    if args.invalid {
        // Invalid on purpose: a command buffer without SIMULTANEOUS_USE pending twice.
        let cbs = [frame_cb, frame_cb];
        let submit = vk::SubmitInfo::default().command_buffers(&cbs);
        // SAFETY: valid handles; the usage is what is invalid, which the validation layer reports.
        unsafe {
            device.queue_submit(queue, &[submit], app.fence)?;
            device.wait_for_fences(&[app.fence], true, 10_000_000_000)?;
            device.queue_wait_idle(queue)?;
        }
    }
    if args.exit_without_destroy {
        println!("workloads: ok");
        std::thread::sleep(std::time::Duration::from_millis(250));
        std::process::exit(0);
    }
    drop(app);
    Ok(())
}
