//! The phone sizes previews are rendered at.

/// A screen: its size in physical pixels and its device pixel ratio (physical pixels per
/// logical pixel, the unit of every size a template writes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Screen {
    /// Width in physical pixels.
    pub width: u32,
    /// Height in physical pixels.
    pub height: u32,
    /// Physical pixels per logical pixel.
    pub scale: f32,
}

impl Screen {
    /// Width in logical pixels.
    pub fn logical_width(&self) -> f32 {
        self.width as f32 / self.scale
    }

    /// Height in logical pixels.
    pub fn logical_height(&self) -> f32 {
        self.height as f32 / self.scale
    }
}

/// A 1080x1920 Android phone at 2.625 physical pixels per logical pixel (411 x 731 logical).
pub const PHONE_1080X1920: Screen = Screen {
    width: 1080,
    height: 1920,
    scale: 2.625,
};

/// A 1170x2532 iPhone at 3 physical pixels per logical pixel (390 x 844 logical).
pub const PHONE_1170X2532: Screen = Screen {
    width: 1170,
    height: 2532,
    scale: 3.0,
};

/// Every size a preview is rendered at.
pub const PHONE_SIZES: [Screen; 2] = [PHONE_1080X1920, PHONE_1170X2532];
