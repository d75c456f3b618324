//! The box layout: Flutter's model in miniature. A parent passes its child minimum and
//! maximum sizes; the child picks its size within them; the parent places it. Sizes are
//! logical pixels.
//!
//! Rows and columns lay out their fixed children first (unbounded along the main axis),
//! then share what is left among `Expanded` children by flex, then place everything by the
//! main and cross alignments. A `Stack` is as large as its largest non-positioned child.
//!
//! Every box laid out is a node of the [`Meter`], nested no deeper than its budget allows;
//! every text's characters are glyphs of it, its font size checked first.

use offer_domain::template::widgets::{BoxFit, CrossAxisAlignment, MainAxisAlignment, TextAlign};

use crate::BoundItem;
use crate::budget::Meter;
use crate::error::RenderError;
use crate::screen::Screen;
use crate::text::{DEFAULT_COLOR, DEFAULT_SIZE, Fonts};
use crate::widget::{Axis, Style, Widget};

/// Size of an `Image` whose item has no decodable art, and of an unsized one without
/// bounds.
pub const PLACEHOLDER_SIZE: f32 = 120.0;
/// Height of an `OfferButton` that sets none (Material's large button).
pub const BUTTON_HEIGHT: f32 = 56.0;
/// Corner radius of an `OfferButton`.
pub const BUTTON_RADIUS: f32 = 12.0;
/// Caption size of an `OfferButton`.
pub const BUTTON_TEXT_SIZE: f32 = 20.0;

/// Minimum and maximum size a parent allows; a maximum may be infinite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constraints {
    /// Least width.
    pub min_w: f32,
    /// Most width.
    pub max_w: f32,
    /// Least height.
    pub min_h: f32,
    /// Most height.
    pub max_h: f32,
}

impl Constraints {
    fn tight(w: f32, h: f32) -> Self {
        Self {
            min_w: w,
            max_w: w,
            min_h: h,
            max_h: h,
        }
    }

    fn loose(self) -> Self {
        Self {
            min_w: 0.0,
            min_h: 0.0,
            ..self
        }
    }

    fn constrain(&self, w: f32, h: f32) -> (f32, f32) {
        (
            w.min(self.max_w).max(self.min_w),
            h.min(self.max_h).max(self.min_h),
        )
    }

    /// The largest finite size allowed, or `fallback` along an unbounded axis.
    fn biggest_or(&self, fallback: (f32, f32)) -> (f32, f32) {
        let w = if self.max_w.is_finite() {
            self.max_w
        } else {
            fallback.0
        };
        let h = if self.max_h.is_finite() {
            self.max_h
        } else {
            fallback.1
        };
        self.constrain(w, h)
    }
}

/// An unsized image's box, as Flutter picks it: the art's own size, stretched to a tight
/// axis and shrunk to the bounds, keeping its aspect ratio where the constraints allow.
fn fit_aspect(intrinsic: (f32, f32), c: Constraints) -> (f32, f32) {
    let aspect = intrinsic.0 / intrinsic.1.max(f32::EPSILON);
    let (mut w, mut h) = intrinsic;
    if c.min_h == c.max_h && c.max_h.is_finite() {
        h = c.max_h;
        w = h * aspect;
    } else if c.min_w == c.max_w && c.max_w.is_finite() {
        w = c.max_w;
        h = w / aspect;
    }
    if w > c.max_w {
        w = c.max_w;
        h = w / aspect;
    }
    if h > c.max_h {
        h = c.max_h;
        w = h * aspect;
    }
    (w, h)
}

/// What a laid-out box draws, before its children.
#[derive(Debug, Clone, PartialEq)]
pub enum Paint {
    /// Nothing of its own.
    None,
    /// A filled, possibly rounded, rectangle.
    Rect {
        /// `0xAARRGGBB`.
        color: u32,
        /// Corner radius.
        radius: f32,
    },
    /// Lines of text, each already fitting the box.
    Text {
        /// The lines with their x offsets inside the box.
        lines: Vec<(f32, String)>,
        /// Font size.
        size: f32,
        /// Style (weight and colour).
        style: Style,
        /// Line height.
        line_height: f32,
    },
    /// A bound item's art, or a placeholder when it has none.
    Image {
        /// Position in the bound items.
        item: Option<usize>,
        /// How it fills the box.
        fit: BoxFit,
    },
}

/// A box with its size, what it draws and its children at their offsets.
#[derive(Debug, Clone, PartialEq)]
pub struct Laid {
    /// Width and height.
    pub size: (f32, f32),
    /// What the box draws.
    pub paint: Paint,
    /// Children and their top-left offsets inside this box.
    pub children: Vec<((f32, f32), Laid)>,
}

impl Laid {
    fn leaf(size: (f32, f32), paint: Paint) -> Self {
        Self {
            size,
            paint,
            children: Vec::new(),
        }
    }
}

/// Lays `root` out on the whole screen under `meter`.
pub fn layout_page(
    root: &Widget,
    items: &[BoundItem],
    fonts: &Fonts,
    screen: Screen,
    meter: &Meter,
) -> Result<Laid, RenderError> {
    let c = Constraints::tight(screen.logical_width(), screen.logical_height());
    Layout {
        fonts,
        items,
        scale: screen.scale,
        meter,
    }
    .layout(root, c, 0)
}

struct Layout<'a> {
    fonts: &'a Fonts,
    items: &'a [BoundItem],
    scale: f32,
    meter: &'a Meter,
}

impl Layout<'_> {
    /// Lays `w` out within `c`; `depth` is how deep it is nested.
    fn layout(&self, w: &Widget, c: Constraints, depth: usize) -> Result<Laid, RenderError> {
        self.meter.depth(depth)?;
        self.meter.node()?;
        self.meter.alloc_of::<Laid>(1, "a laid-out box")?;
        let next = depth + 1;
        Ok(match w {
            Widget::Empty => Laid::leaf(c.constrain(0.0, 0.0), Paint::None),
            Widget::Sized {
                width,
                height,
                child,
            } => {
                let (min_w, max_w) = match width {
                    Some(v) => {
                        let v = v.min(c.max_w).max(c.min_w);
                        (v, v)
                    }
                    None => (c.min_w, c.max_w),
                };
                let (min_h, max_h) = match height {
                    Some(v) => {
                        let v = v.min(c.max_h).max(c.min_h);
                        (v, v)
                    }
                    None => (c.min_h, c.max_h),
                };
                let inner = Constraints {
                    min_w,
                    max_w,
                    min_h,
                    max_h,
                };
                let laid = self.layout(child, inner, next)?;
                let size = inner.constrain(laid.size.0, laid.size.1);
                Laid {
                    size,
                    paint: Paint::None,
                    children: vec![((0.0, 0.0), laid)],
                }
            }
            Widget::Padding { insets, child } => {
                let (h, v) = (insets.left + insets.right, insets.top + insets.bottom);
                let inner = Constraints {
                    min_w: (c.min_w - h).max(0.0),
                    max_w: (c.max_w - h).max(0.0),
                    min_h: (c.min_h - v).max(0.0),
                    max_h: (c.max_h - v).max(0.0),
                };
                let laid = self.layout(child, inner, next)?;
                let size = c.constrain(laid.size.0 + h, laid.size.1 + v);
                Laid {
                    size,
                    paint: Paint::None,
                    children: vec![((insets.left, insets.top), laid)],
                }
            }
            Widget::Align { x, y, child } => {
                let laid = self.layout(child, c.loose(), next)?;
                let size = c.biggest_or(laid.size);
                let offset = (
                    (size.0 - laid.size.0) * (x + 1.0) / 2.0,
                    (size.1 - laid.size.1) * (y + 1.0) / 2.0,
                );
                Laid {
                    size,
                    paint: Paint::None,
                    children: vec![(offset, laid)],
                }
            }
            Widget::Fill {
                color,
                radius,
                child,
            } => {
                let paint = Paint::Rect {
                    color: *color,
                    radius: *radius,
                };
                if **child == Widget::Empty {
                    return Ok(Laid::leaf(c.biggest_or((0.0, 0.0)), paint));
                }
                let laid = self.layout(child, c, next)?;
                Laid {
                    size: laid.size,
                    paint,
                    children: vec![((0.0, 0.0), laid)],
                }
            }
            Widget::Flex {
                axis,
                main,
                cross,
                min,
                children,
            } => self.flex((*axis, *main, *cross, *min), children, c, next)?,
            Widget::Flexible { child, .. } | Widget::Positioned { child, .. } => {
                self.layout(child, c, next)?
            }
            Widget::Stack { align, children } => self.stack(*align, children, c, next)?,
            Widget::Text {
                text,
                style,
                align,
                max_lines,
            } => self.text(text, style, *align, *max_lines, c)?,
            Widget::Image {
                item,
                width,
                height,
                fit,
            } => {
                let intrinsic = item
                    .and_then(|i| self.items.get(i))
                    .and_then(|it| it.art.as_deref())
                    .and_then(|bytes| {
                        image::ImageReader::new(std::io::Cursor::new(bytes))
                            .with_guessed_format()
                            .ok()?
                            .into_dimensions()
                            .ok()
                    })
                    .map_or((PLACEHOLDER_SIZE, PLACEHOLDER_SIZE), |(w, h)| {
                        (w as f32 / self.scale, h as f32 / self.scale)
                    });
                let (w, h) = match (width, height) {
                    (Some(w), Some(h)) => (*w, *h),
                    (Some(w), None) => (*w, w * intrinsic.1 / intrinsic.0.max(1.0)),
                    (None, Some(h)) => (h * intrinsic.0 / intrinsic.1.max(1.0), *h),
                    (None, None) => fit_aspect(intrinsic, c),
                };
                Laid::leaf(
                    c.constrain(w, h),
                    Paint::Image {
                        item: *item,
                        fit: *fit,
                    },
                )
            }
            Widget::Button {
                label,
                color,
                text_color,
                width,
                height,
            } => {
                let style = Style {
                    size: Some(BUTTON_TEXT_SIZE),
                    weight: Some(700),
                    color: Some(*text_color),
                };
                self.meter.glyphs(label.chars().count() as u64)?;
                self.meter.alloc(Some(label.len() as u64), "text")?;
                let text_w = self.fonts.width(label, &style, BUTTON_TEXT_SIZE);
                let w = width.unwrap_or(if c.max_w.is_finite() {
                    c.max_w
                } else {
                    text_w + 48.0
                });
                let size = c.constrain(w, height.unwrap_or(BUTTON_HEIGHT));
                let line_height = self.fonts.line_height(&style, BUTTON_TEXT_SIZE);
                let text = Laid::leaf(
                    (size.0, line_height),
                    Paint::Text {
                        lines: vec![(((size.0 - text_w) / 2.0).max(0.0), label.clone())],
                        size: BUTTON_TEXT_SIZE,
                        style,
                        line_height,
                    },
                );
                Laid {
                    size,
                    paint: Paint::Rect {
                        color: *color,
                        radius: BUTTON_RADIUS,
                    },
                    children: vec![((0.0, (size.1 - line_height) / 2.0), text)],
                }
            }
        })
    }

    fn text(
        &self,
        text: &str,
        style: &Style,
        align: TextAlign,
        max_lines: Option<usize>,
        c: Constraints,
    ) -> Result<Laid, RenderError> {
        let size = style.size.unwrap_or(DEFAULT_SIZE);
        self.meter.font_size(size)?;
        let size = size.max(1.0);
        self.meter.glyphs(text.chars().count() as u64)?;
        // The lines hold the text once more.
        self.meter.alloc(Some(text.len() as u64), "text")?;
        let style = Style {
            color: Some(style.color.unwrap_or(DEFAULT_COLOR)),
            ..*style
        };
        let mut lines = self.fonts.wrap(text, &style, size, c.max_w);
        if let Some(m) = max_lines {
            lines.truncate(m);
        }
        let widths: Vec<f32> = lines
            .iter()
            .map(|l| self.fonts.width(l, &style, size))
            .collect();
        let widest = widths.iter().copied().fold(0.0, f32::max);
        let line_height = self.fonts.line_height(&style, size);
        let box_size = c.constrain(widest, line_height * lines.len() as f32);
        let placed = lines
            .into_iter()
            .zip(widths)
            .map(|(l, w)| {
                let x = match align {
                    TextAlign::Left => 0.0,
                    TextAlign::Center => (box_size.0 - w) / 2.0,
                    TextAlign::Right => box_size.0 - w,
                };
                (x, l)
            })
            .collect();
        Ok(Laid::leaf(
            box_size,
            Paint::Text {
                lines: placed,
                size,
                style,
                line_height,
            },
        ))
    }

    /// A row or column of `children` (its axis, main and cross alignments and whether its
    /// main size is the least), each nested `depth` deep.
    fn flex(
        &self,
        (axis, main, cross, min): (Axis, MainAxisAlignment, CrossAxisAlignment, bool),
        children: &[Widget],
        c: Constraints,
        depth: usize,
    ) -> Result<Laid, RenderError> {
        // Work in (main, cross) coordinates.
        let (max_main, max_cross, min_cross) = match axis {
            Axis::Horizontal => (c.max_w, c.max_h, c.min_h),
            Axis::Vertical => (c.max_h, c.max_w, c.min_w),
        };
        let to_xy = |m: f32, x: f32| match axis {
            Axis::Horizontal => (m, x),
            Axis::Vertical => (x, m),
        };
        let of = |size: (f32, f32)| match axis {
            Axis::Horizontal => size,
            Axis::Vertical => (size.1, size.0),
        };
        let cross_min = if cross == CrossAxisAlignment::Stretch && max_cross.is_finite() {
            max_cross
        } else {
            0.0
        };
        let child_c = |main_min: f32, main_max: f32| {
            let (min_w, max_w, min_h, max_h) = match axis {
                Axis::Horizontal => (main_min, main_max, cross_min, max_cross),
                Axis::Vertical => (cross_min, max_cross, main_min, main_max),
            };
            Constraints {
                min_w,
                max_w,
                min_h,
                max_h,
            }
        };
        let mut laid: Vec<Option<Laid>> = vec![None; children.len()];
        let mut used = 0.0;
        let mut flex_total = 0u32;
        for (i, w) in children.iter().enumerate() {
            match w {
                Widget::Flexible { flex, .. } if max_main.is_finite() => flex_total += flex,
                _ => {
                    let l = self.layout(w, child_c(0.0, f32::INFINITY), depth)?;
                    used += of(l.size).0;
                    laid[i] = Some(l);
                }
            }
        }
        let free = if max_main.is_finite() {
            (max_main - used).max(0.0)
        } else {
            0.0
        };
        if flex_total > 0 {
            let unit = free / flex_total as f32;
            for (i, w) in children.iter().enumerate() {
                if let Widget::Flexible { flex, .. } = w
                    && laid[i].is_none()
                {
                    let share = unit * *flex as f32;
                    let l = self.layout(w, child_c(share, share), depth)?;
                    used += of(l.size).0;
                    laid[i] = Some(l);
                }
            }
        }
        let laid: Vec<Laid> = laid.into_iter().flatten().collect();
        let main_size = if min || !max_main.is_finite() {
            used
        } else {
            max_main
        };
        let cross_size = laid
            .iter()
            .map(|l| of(l.size).1)
            .fold(min_cross, f32::max)
            .min(max_cross)
            .max(cross_min);
        let remaining = (main_size - used).max(0.0);
        let n = laid.len() as f32;
        let (mut pos, gap) = match main {
            MainAxisAlignment::Start => (0.0, 0.0),
            MainAxisAlignment::End => (remaining, 0.0),
            MainAxisAlignment::Center => (remaining / 2.0, 0.0),
            MainAxisAlignment::SpaceBetween if n > 1.0 => (0.0, remaining / (n - 1.0)),
            MainAxisAlignment::SpaceBetween => (0.0, 0.0),
            MainAxisAlignment::SpaceAround if n > 0.0 => (remaining / n / 2.0, remaining / n),
            MainAxisAlignment::SpaceAround => (0.0, 0.0),
            MainAxisAlignment::SpaceEvenly => (remaining / (n + 1.0), remaining / (n + 1.0)),
        };
        let mut placed = Vec::with_capacity(laid.len());
        for l in laid {
            let (m, x) = of(l.size);
            let off = match cross {
                CrossAxisAlignment::Start | CrossAxisAlignment::Stretch => 0.0,
                CrossAxisAlignment::End => cross_size - x,
                CrossAxisAlignment::Center => (cross_size - x) / 2.0,
            };
            placed.push((to_xy(pos, off), l));
            pos += m + gap;
        }
        let (w, h) = to_xy(main_size, cross_size);
        Ok(Laid {
            size: c.constrain(w, h),
            paint: Paint::None,
            children: placed,
        })
    }

    /// A stack of `children`, each nested `depth` deep.
    fn stack(
        &self,
        align: (f32, f32),
        children: &[Widget],
        c: Constraints,
        depth: usize,
    ) -> Result<Laid, RenderError> {
        let mut laid: Vec<Option<Laid>> = Vec::with_capacity(children.len());
        let mut biggest: Option<(f32, f32)> = None;
        for w in children {
            if matches!(w, Widget::Positioned { .. }) {
                laid.push(None);
                continue;
            }
            let l = self.layout(w, c.loose(), depth)?;
            let (bw, bh) = biggest.unwrap_or((0.0, 0.0));
            biggest = Some((bw.max(l.size.0), bh.max(l.size.1)));
            laid.push(Some(l));
        }
        let size = match biggest {
            Some((w, h)) => c.constrain(w, h),
            None => c.biggest_or((0.0, 0.0)),
        };
        let aligned = |l: &Laid| {
            (
                (size.0 - l.size.0) * (align.0 + 1.0) / 2.0,
                (size.1 - l.size.1) * (align.1 + 1.0) / 2.0,
            )
        };
        let mut placed = Vec::with_capacity(children.len());
        for (w, l) in children.iter().zip(laid) {
            if let Some(l) = l {
                placed.push((aligned(&l), l));
                continue;
            }
            let Widget::Positioned { edges, child } = w else {
                continue;
            };
            let [left, top, right, bottom, width, height] = *edges;
            let extent =
                |lo: Option<f32>, hi: Option<f32>, fixed: Option<f32>, total: f32| match (lo, hi) {
                    (Some(a), Some(b)) => Some((total - a - b).max(0.0)),
                    _ => fixed,
                };
            let w_fixed = extent(left, right, width, size.0);
            let h_fixed = extent(top, bottom, height, size.1);
            let cc = Constraints {
                min_w: w_fixed.unwrap_or(0.0),
                max_w: w_fixed.unwrap_or(size.0),
                min_h: h_fixed.unwrap_or(0.0),
                max_h: h_fixed.unwrap_or(size.1),
            };
            let l = self.layout(child, cc, depth)?;
            let centred = aligned(&l);
            let x = match (left, right) {
                (Some(a), _) => a,
                (None, Some(b)) => size.0 - b - l.size.0,
                (None, None) => centred.0,
            };
            let y = match (top, bottom) {
                (Some(a), _) => a,
                (None, Some(b)) => size.1 - b - l.size.1,
                (None, None) => centred.1,
            };
            placed.push(((x, y), l));
        }
        Ok(Laid {
            size,
            paint: Paint::None,
            children: placed,
        })
    }
}
