//! The target's ELF images (feature `elf`): printf format strings read at the addresses messages carry.
//!
//! An STMLib printf message carries the **address** of its format string in the target's memory, not the
//! string (`docs/stm.md` §11); the string is in the program's ELF file, in a section loaded at that address.
//! [`ElfImage`] borrows a file's bytes and keeps its allocated sections by address (32- and 64-bit ELF,
//! either byte order, through the `object` crate); [`ElfImages`] gives one image to every master or one per
//! master, and is the [`FormatStrings`] the message decoder reads.
//!
//! ```no_run
//! use stp_decode::elf::{ElfImage, ElfImages};
//! let dsp = std::fs::read("dsp_app.out")?;
//! let arm = std::fs::read("arm_app")?;
//! let mut images = ElfImages::new();
//! images.set_default(ElfImage::parse(&dsp)?);
//! images.set_master(8, ElfImage::parse(&arm)?); // Arm core 0 runs another program
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use object::{Object, ObjectSection, ObjectSymbol};

use crate::message::{FormatStrings, StringError};

/// Why a file is not an image this crate can read strings from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ElfError {
    /// The `object` crate could not parse the file.
    #[error("not an object file")]
    Parse(#[source] object::Error),
    /// An ELF file without any section loaded at an address (a relocatable object, for instance): no
    /// string can be read from it.
    #[error("an ELF file without allocated sections holding data")]
    NoSections,
}

/// A section loaded at `address`, its bytes borrowed from the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Section<'a> {
    address: u64,
    bytes: &'a [u8],
}

/// An ELF file's allocated sections, by address, borrowing the file's bytes.
#[derive(Debug, Clone)]
pub struct ElfImage<'a> {
    sections: Vec<Section<'a>>,
    symbols: BTreeMap<&'a str, u64>,
}

impl<'a> ElfImage<'a> {
    /// Reads the sections (and the symbol table) of an ELF file.
    pub fn parse(data: &'a [u8]) -> Result<ElfImage<'a>, ElfError> {
        // Only ELF is compiled into the `object` crate here: other formats are parse errors.
        let file = object::File::parse(data).map_err(ElfError::Parse)?;
        let mut sections: Vec<Section<'a>> = file
            .sections()
            .filter(|s| s.address() != 0)
            .filter_map(|s| {
                let bytes = s.data().ok()?;
                (!bytes.is_empty()).then_some(Section {
                    address: s.address(),
                    bytes,
                })
            })
            .collect();
        if sections.is_empty() {
            return Err(ElfError::NoSections);
        }
        sections.sort_by_key(|s| s.address);
        let symbols = file
            .symbols()
            .filter_map(|s| Some((s.name().ok()?, s.address())))
            .filter(|(name, _)| !name.is_empty())
            .collect();
        Ok(ElfImage { sections, symbols })
    }

    /// The address of the symbol `name`, from the symbol table.
    pub fn symbol(&self, name: &str) -> Option<u64> {
        self.symbols.get(name).copied()
    }

    /// The bytes from `address` to the end of the section holding it.
    pub fn bytes_at(&self, address: u64) -> Option<&'a [u8]> {
        let after = self.sections.partition_point(|s| s.address <= address);
        // Sections may overlap (or be empty of the address): look back from the last one starting at or
        // before it.
        self.sections[..after].iter().rev().find_map(|s| {
            let at = usize::try_from(address - s.address).ok()?;
            s.bytes.get(at..).filter(|rest| !rest.is_empty())
        })
    }

    /// The NUL-terminated string at `address`, without its NUL.
    pub fn c_string(&self, address: u64) -> Result<&'a [u8], StringError> {
        let bytes = self.bytes_at(address).ok_or(StringError::Outside)?;
        let nul = bytes
            .iter()
            .position(|&b| b == 0)
            .ok_or(StringError::Unterminated)?;
        Ok(&bytes[..nul])
    }
}

/// The images of a target: one for every master, and others for some masters.
#[derive(Debug, Clone, Default)]
pub struct ElfImages<'a> {
    default: Option<ElfImage<'a>>,
    masters: BTreeMap<u16, ElfImage<'a>>,
}

impl<'a> ElfImages<'a> {
    /// No image yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The image of every master that has none of its own.
    pub fn set_default(&mut self, image: ElfImage<'a>) {
        self.default = Some(image);
    }

    /// The image of `master`.
    pub fn set_master(&mut self, master: u16, image: ElfImage<'a>) {
        self.masters.insert(master, image);
    }

    /// The image `master`'s strings are read from.
    pub fn image(&self, master: u16) -> Option<&ElfImage<'a>> {
        self.masters.get(&master).or(self.default.as_ref())
    }
}

impl FormatStrings for ElfImages<'_> {
    fn string(&self, master: u16, address: u32) -> Result<&[u8], StringError> {
        self.image(master)
            .ok_or(StringError::NoImage)?
            .c_string(u64::from(address))
    }
}

impl FormatStrings for ElfImage<'_> {
    fn string(&self, _: u16, address: u32) -> Result<&[u8], StringError> {
        self.c_string(u64::from(address))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_an_elf_file() {
        assert!(matches!(ElfImage::parse(b"hello"), Err(ElfError::Parse(_))));
        assert!(matches!(ElfImage::parse(&[]), Err(ElfError::Parse(_))));
    }

    #[test]
    fn lookups_in_overlapping_and_separate_sections() {
        let image = ElfImage {
            sections: std::vec![
                Section {
                    address: 0x100,
                    bytes: b"abc\0def\0"
                },
                Section {
                    address: 0x104,
                    bytes: b"xyz"
                },
                Section {
                    address: 0x200,
                    bytes: b"ghi"
                },
            ],
            symbols: BTreeMap::new(),
        };
        assert_eq!(image.c_string(0x100), Ok(&b"abc"[..]));
        assert_eq!(image.c_string(0x101), Ok(&b"bc"[..]));
        assert_eq!(image.c_string(0x106), Err(StringError::Unterminated));
        assert_eq!(image.c_string(0x108), Err(StringError::Outside));
        assert_eq!(image.c_string(0x0ff), Err(StringError::Outside));
        assert_eq!(image.c_string(0x200), Err(StringError::Unterminated));
        let mut images = ElfImages::new();
        assert_eq!(images.string(3, 0x100), Err(StringError::NoImage));
        images.set_master(3, image);
        // The section starting last at or before the address wins: "xyz" has no NUL.
        assert_eq!(images.string(3, 0x104), Err(StringError::Unterminated));
        assert_eq!(images.string(4, 0x100), Err(StringError::NoImage));
    }
}
