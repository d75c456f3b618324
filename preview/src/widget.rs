//! The evaluated widget tree: what a template's `build` returns once its expressions,
//! bindings and constants are resolved. Sizes are logical pixels; colours `0xAARRGGBB`.

use offer_domain::template::widgets::{BoxFit, CrossAxisAlignment, MainAxisAlignment, TextAlign};

/// Insets: left, top, right, bottom.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Insets {
    /// Left inset.
    pub left: f32,
    /// Top inset.
    pub top: f32,
    /// Right inset.
    pub right: f32,
    /// Bottom inset.
    pub bottom: f32,
}

/// A text style; unset fields take the page defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Style {
    /// Font size.
    pub size: Option<f32>,
    /// Weight, 100 to 900; 600 and above is set bold.
    pub weight: Option<u16>,
    /// Colour.
    pub color: Option<u32>,
}

/// The main axis of a flex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// `Row`.
    Horizontal,
    /// `Column`.
    Vertical,
}

/// One widget.
#[derive(Debug, Clone, PartialEq)]
pub enum Widget {
    /// Nothing (an unknown widget, a missing child).
    Empty,
    /// `SizedBox`, and the size of a `Container`.
    Sized {
        /// Fixed width.
        width: Option<f32>,
        /// Fixed height.
        height: Option<f32>,
        /// The child.
        child: Box<Widget>,
    },
    /// `Padding`, and a `Container`'s padding and margin.
    Padding {
        /// The insets.
        insets: Insets,
        /// The child.
        child: Box<Widget>,
    },
    /// `Align`, `Center`, a `Container`'s alignment.
    Align {
        /// -1 (left) to 1 (right).
        x: f32,
        /// -1 (top) to 1 (bottom).
        y: f32,
        /// The child.
        child: Box<Widget>,
    },
    /// A filled box: `Scaffold`'s background, a `Container`'s colour or decoration.
    Fill {
        /// Colour.
        color: u32,
        /// Corner radius.
        radius: f32,
        /// The child.
        child: Box<Widget>,
    },
    /// `Row` or `Column`.
    Flex {
        /// Main axis.
        axis: Axis,
        /// Main-axis placement.
        main: MainAxisAlignment,
        /// Cross-axis placement.
        cross: CrossAxisAlignment,
        /// `MainAxisSize.min`: as small as the children.
        min: bool,
        /// The children.
        children: Vec<Widget>,
    },
    /// `Expanded` or `Spacer`: a share of a flex's free space.
    Flexible {
        /// The share.
        flex: u32,
        /// The child.
        child: Box<Widget>,
    },
    /// `Stack`.
    Stack {
        /// Alignment of non-positioned children, x then y.
        align: (f32, f32),
        /// The children.
        children: Vec<Widget>,
    },
    /// `Positioned`.
    Positioned {
        /// Edges and size, each optional.
        edges: [Option<f32>; 6],
        /// The child.
        child: Box<Widget>,
    },
    /// `Text`.
    Text {
        /// The text.
        text: String,
        /// Its style.
        style: Style,
        /// Line alignment.
        align: TextAlign,
        /// Most lines shown.
        max_lines: Option<usize>,
    },
    /// `Image`: a bound item's art.
    Image {
        /// Position in the bound items.
        item: Option<usize>,
        /// Fixed width.
        width: Option<f32>,
        /// Fixed height.
        height: Option<f32>,
        /// Scaling.
        fit: BoxFit,
    },
    /// `OfferButton`.
    Button {
        /// The caption: the item's price unless a label was given.
        label: String,
        /// Fill colour.
        color: u32,
        /// Caption colour.
        text_color: u32,
        /// Fixed width.
        width: Option<f32>,
        /// Fixed height.
        height: Option<f32>,
    },
}

impl Widget {
    /// The widgets directly inside this one.
    pub fn children(&self) -> &[Widget] {
        match self {
            Self::Sized { child, .. }
            | Self::Padding { child, .. }
            | Self::Align { child, .. }
            | Self::Fill { child, .. }
            | Self::Flexible { child, .. }
            | Self::Positioned { child, .. } => std::slice::from_ref(&**child),
            Self::Flex { children, .. } | Self::Stack { children, .. } => children,
            Self::Empty | Self::Text { .. } | Self::Image { .. } | Self::Button { .. } => &[],
        }
    }

    /// Bytes of text this widget holds itself (its children's not counted), which the
    /// budget charges when the widget is made or copied.
    pub fn text_len(&self) -> usize {
        match self {
            Self::Text { text, .. } => text.len(),
            Self::Button { label, .. } => label.len(),
            _ => 0,
        }
    }
}
