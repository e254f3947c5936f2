//! Fuzzes the kbase counter-data parsers with arbitrary bytes: vinstr dumps (block layout from the
//! first bytes, as the GPU properties or a driver's enumeration would give it), the kinstr_prfcnt
//! enumeration list, and the GET_GPUPROPS record buffer. The bytes come from libFuzzer; none of
//! these parsers may panic.
#![no_main]

use hwcpipe::gpu::dump::{BlockLayout, BlockSums};
use hwcpipe::gpu::kinstr::parse_enum;
use hwcpipe::gpu::props::decode_props_buffer;
use hwcpipe::gpu::tables::BlockKind;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 10 {
        return;
    }
    let core_mask = u64::from_le_bytes(data[0..8].try_into().unwrap());
    let l2_slices = u32::from(data[8]);
    let rest = &data[10..];
    match data[9] % 3 {
        0 => {
            let mut sums = BlockSums::default();
            // Odd selectors take the layout from an enumeration of slot counts in the next bytes.
            let layout = if data[9] & 4 != 0 && rest.len() >= 3 {
                let slots = [1, 1, u32::from(rest[0]), u32::from(rest[1])];
                let values = if rest[2] & 1 == 0 { 64 } else { 128 };
                BlockLayout::from_enumeration(slots, values, core_mask, l2_slices)
            } else {
                BlockLayout::from_props(core_mask, l2_slices)
            };
            if let Ok(layout) = layout {
                let _ = layout.accumulate(rest, &mut sums);
                let mut sized = rest.to_vec();
                sized.resize(layout.dump_bytes(), 0xA5);
                layout
                    .accumulate(&sized, &mut sums)
                    .expect("a dump of the layout's size parses");
                for kind in BlockKind::ALL {
                    let _ = sums.get(kind, u32::from(data[9]));
                }
            }
        }
        1 => {
            let _ = parse_enum(rest, u32::from(data[8]), u32::from(data[0]) * 4);
        }
        _ => {
            let _ = decode_props_buffer(rest);
        }
    }
});
