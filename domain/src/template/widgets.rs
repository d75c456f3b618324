//! The widget table: every constructor and constant a template may use, with the
//! arguments each one takes. The validator refuses anything not listed here and the preview
//! renderer draws exactly what is listed here, so the two never disagree.
//!
//! Every widget also accepts `key` (ignored, as Flutter code routinely passes one).

/// What a constructor builds, for the renderer's `match`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ctor {
    /// `Scaffold`: a page with a background colour and a body.
    Scaffold,
    /// `SafeArea`: its child (the preview has no system insets).
    SafeArea,
    /// `Column`: children top to bottom.
    Column,
    /// `Row`: children left to right.
    Row,
    /// `Stack`: children on top of each other.
    Stack,
    /// `Positioned`: a `Stack` child placed by its edges.
    Positioned,
    /// `Align`: its child at an alignment within the available space.
    Align,
    /// `Center`: its child centred.
    Center,
    /// `Container`: size, colour, decoration, padding, margin and alignment for its child.
    Container,
    /// `Padding`: insets around its child.
    Padding,
    /// `SizedBox`: a fixed width and/or height.
    SizedBox,
    /// `Expanded`: a `Row`/`Column` child taking a share of the free space.
    Expanded,
    /// `Spacer`: an empty `Expanded`.
    Spacer,
    /// `Text`: a string, wrapped to the available width.
    Text,
    /// `Image`: a bound item's art, scaled to fit.
    Image,
    /// `OfferButton`: the purchase button of a bound item, showing its price.
    OfferButton,
    /// `EdgeInsets.all(v)`.
    EdgeInsetsAll,
    /// `EdgeInsets.symmetric(horizontal:, vertical:)`.
    EdgeInsetsSymmetric,
    /// `EdgeInsets.only(left:, top:, right:, bottom:)`.
    EdgeInsetsOnly,
    /// `EdgeInsets.fromLTRB(l, t, r, b)`.
    EdgeInsetsFromLtrb,
    /// `TextStyle(fontSize:, fontWeight:, color:)`.
    TextStyle,
    /// `Color(0xAARRGGBB)`.
    Color,
    /// `Color.fromARGB(a, r, g, b)`.
    ColorFromArgb,
    /// `Color.fromRGBO(r, g, b, opacity)`.
    ColorFromRgbo,
    /// `BoxDecoration(color:, borderRadius:)`.
    BoxDecoration,
    /// `BorderRadius.circular(r)`.
    BorderRadiusCircular,
    /// `BorderRadius.all(Radius.circular(r))`.
    BorderRadiusAll,
    /// `Radius.circular(r)`.
    RadiusCircular,
}

/// One constructor of the table and the arguments it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CtorSpec {
    /// The name as written in Dart, dotted for named constructors (`EdgeInsets.all`).
    pub name: &'static str,
    /// What it builds.
    pub ctor: Ctor,
    /// Positional parameters, in order; all of them are required.
    pub positional: &'static [&'static str],
    /// Named arguments accepted.
    pub named: &'static [&'static str],
    /// Named arguments that must be passed.
    pub required: &'static [&'static str],
}

const fn spec(
    name: &'static str,
    ctor: Ctor,
    positional: &'static [&'static str],
    named: &'static [&'static str],
    required: &'static [&'static str],
) -> CtorSpec {
    CtorSpec {
        name,
        ctor,
        positional,
        named,
        required,
    }
}

/// The named arguments `Column` and `Row` both take.
const FLEX_FIELDS: &[&str] = &[
    "key",
    "children",
    "mainAxisAlignment",
    "crossAxisAlignment",
    "mainAxisSize",
];

/// Every constructor a template may call.
pub const CONSTRUCTORS: &[CtorSpec] = &[
    spec(
        "Scaffold",
        Ctor::Scaffold,
        &[],
        &["key", "backgroundColor", "body"],
        &[],
    ),
    spec(
        "SafeArea",
        Ctor::SafeArea,
        &[],
        &["key", "child"],
        &["child"],
    ),
    spec("Column", Ctor::Column, &[], FLEX_FIELDS, &[]),
    spec("Row", Ctor::Row, &[], FLEX_FIELDS, &[]),
    spec(
        "Stack",
        Ctor::Stack,
        &[],
        &["key", "children", "alignment"],
        &[],
    ),
    spec(
        "Positioned",
        Ctor::Positioned,
        &[],
        &[
            "key", "left", "top", "right", "bottom", "width", "height", "child",
        ],
        &["child"],
    ),
    spec(
        "Align",
        Ctor::Align,
        &[],
        &["key", "alignment", "child"],
        &[],
    ),
    spec("Center", Ctor::Center, &[], &["key", "child"], &[]),
    spec(
        "Container",
        Ctor::Container,
        &[],
        &[
            "key",
            "width",
            "height",
            "color",
            "padding",
            "margin",
            "decoration",
            "alignment",
            "child",
        ],
        &[],
    ),
    spec(
        "Padding",
        Ctor::Padding,
        &[],
        &["key", "padding", "child"],
        &["padding"],
    ),
    spec(
        "SizedBox",
        Ctor::SizedBox,
        &[],
        &["key", "width", "height", "child"],
        &[],
    ),
    spec(
        "Expanded",
        Ctor::Expanded,
        &[],
        &["key", "flex", "child"],
        &["child"],
    ),
    spec("Spacer", Ctor::Spacer, &[], &["key", "flex"], &[]),
    spec(
        "Text",
        Ctor::Text,
        &["data"],
        &["key", "style", "textAlign", "maxLines"],
        &[],
    ),
    spec(
        "Image",
        Ctor::Image,
        &[],
        &["key", "item", "width", "height", "fit"],
        &["item"],
    ),
    spec(
        "OfferButton",
        Ctor::OfferButton,
        &[],
        &[
            "key",
            "item",
            "label",
            "color",
            "textColor",
            "width",
            "height",
        ],
        &["item"],
    ),
    spec("EdgeInsets.all", Ctor::EdgeInsetsAll, &["value"], &[], &[]),
    spec(
        "EdgeInsets.symmetric",
        Ctor::EdgeInsetsSymmetric,
        &[],
        &["horizontal", "vertical"],
        &[],
    ),
    spec(
        "EdgeInsets.only",
        Ctor::EdgeInsetsOnly,
        &[],
        &["left", "top", "right", "bottom"],
        &[],
    ),
    spec(
        "EdgeInsets.fromLTRB",
        Ctor::EdgeInsetsFromLtrb,
        &["left", "top", "right", "bottom"],
        &[],
        &[],
    ),
    spec(
        "TextStyle",
        Ctor::TextStyle,
        &[],
        &["fontSize", "fontWeight", "color"],
        &[],
    ),
    spec("Color", Ctor::Color, &["value"], &[], &[]),
    spec(
        "Color.fromARGB",
        Ctor::ColorFromArgb,
        &["a", "r", "g", "b"],
        &[],
        &[],
    ),
    spec(
        "Color.fromRGBO",
        Ctor::ColorFromRgbo,
        &["r", "g", "b", "opacity"],
        &[],
        &[],
    ),
    spec(
        "BoxDecoration",
        Ctor::BoxDecoration,
        &[],
        &["color", "borderRadius"],
        &[],
    ),
    spec(
        "BorderRadius.circular",
        Ctor::BorderRadiusCircular,
        &["radius"],
        &[],
        &[],
    ),
    spec(
        "BorderRadius.all",
        Ctor::BorderRadiusAll,
        &["radius"],
        &[],
        &[],
    ),
    spec(
        "Radius.circular",
        Ctor::RadiusCircular,
        &["radius"],
        &[],
        &[],
    ),
];

/// The constructor called `name` (dotted for named constructors), if the table has it.
pub fn constructor(name: &str) -> Option<&'static CtorSpec> {
    CONSTRUCTORS.iter().find(|c| c.name == name)
}

/// How a `Row` or `Column` spreads its children along its main axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MainAxisAlignment {
    /// Packed at the start.
    Start,
    /// Packed at the end.
    End,
    /// Packed in the middle.
    Center,
    /// Free space between children only.
    SpaceBetween,
    /// Half a share of free space at each end.
    SpaceAround,
    /// Equal free space between and around children.
    SpaceEvenly,
}

/// Where a `Row` or `Column` places children across its main axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrossAxisAlignment {
    /// At the start edge.
    Start,
    /// At the end edge.
    End,
    /// Centred.
    Center,
    /// Stretched to the full cross extent.
    Stretch,
}

/// Horizontal alignment of text lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextAlign {
    /// Left (also `start` and `justify`).
    Left,
    /// Right (also `end`).
    Right,
    /// Centred.
    Center,
}

/// How an image is scaled into its box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoxFit {
    /// Whole image visible, aspect kept.
    Contain,
    /// Box filled, aspect kept, overflow cropped.
    Cover,
    /// Box filled, aspect ignored.
    Fill,
}

/// A named constant's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Constant {
    /// A colour, `0xAARRGGBB`.
    Color(u32),
    /// A `MainAxisAlignment` member.
    MainAxis(MainAxisAlignment),
    /// A `CrossAxisAlignment` member.
    CrossAxis(CrossAxisAlignment),
    /// `MainAxisSize.min` (`true`) or `.max` (`false`).
    MainAxisMin(bool),
    /// A `FontWeight` as its numeric weight (400 normal, 700 bold).
    FontWeight(u16),
    /// A `TextAlign` member.
    TextAlign(TextAlign),
    /// A `BoxFit` member.
    BoxFit(BoxFit),
    /// An `Alignment`: x and y from -1 (left/top) to 1 (right/bottom).
    Alignment(f32, f32),
    /// `EdgeInsets.zero` or `BorderRadius.zero`: no insets, no rounding.
    Zero,
}

use Constant as K;
use CrossAxisAlignment as Cross;
use MainAxisAlignment as Main;

/// Every named constant a template may read, as `Group.member`.
pub const CONSTANTS: &[(&str, Constant)] = &[
    ("Colors.transparent", K::Color(0x0000_0000)),
    ("Colors.black", K::Color(0xFF00_0000)),
    ("Colors.black87", K::Color(0xDD00_0000)),
    ("Colors.black54", K::Color(0x8A00_0000)),
    ("Colors.black26", K::Color(0x4200_0000)),
    ("Colors.black12", K::Color(0x1F00_0000)),
    ("Colors.white", K::Color(0xFFFF_FFFF)),
    ("Colors.white70", K::Color(0xB3FF_FFFF)),
    ("Colors.white54", K::Color(0x8AFF_FFFF)),
    ("Colors.white24", K::Color(0x3DFF_FFFF)),
    ("Colors.white12", K::Color(0x1FFF_FFFF)),
    ("Colors.red", K::Color(0xFFF4_4336)),
    ("Colors.pink", K::Color(0xFFE9_1E63)),
    ("Colors.purple", K::Color(0xFF9C_27B0)),
    ("Colors.deepPurple", K::Color(0xFF67_3AB7)),
    ("Colors.indigo", K::Color(0xFF3F_51B5)),
    ("Colors.blue", K::Color(0xFF21_96F3)),
    ("Colors.lightBlue", K::Color(0xFF03_A9F4)),
    ("Colors.cyan", K::Color(0xFF00_BCD4)),
    ("Colors.teal", K::Color(0xFF00_9688)),
    ("Colors.green", K::Color(0xFF4C_AF50)),
    ("Colors.lightGreen", K::Color(0xFF8B_C34A)),
    ("Colors.lime", K::Color(0xFFCD_DC39)),
    ("Colors.yellow", K::Color(0xFFFF_EB3B)),
    ("Colors.amber", K::Color(0xFFFF_C107)),
    ("Colors.orange", K::Color(0xFFFF_9800)),
    ("Colors.deepOrange", K::Color(0xFFFF_5722)),
    ("Colors.brown", K::Color(0xFF79_5548)),
    ("Colors.grey", K::Color(0xFF9E_9E9E)),
    ("Colors.blueGrey", K::Color(0xFF60_7D8B)),
    ("Colors.redAccent", K::Color(0xFFFF_5252)),
    ("Colors.amberAccent", K::Color(0xFFFF_D740)),
    ("Colors.greenAccent", K::Color(0xFF69_F0AE)),
    ("Colors.blueAccent", K::Color(0xFF44_8AFF)),
    ("MainAxisAlignment.start", K::MainAxis(Main::Start)),
    ("MainAxisAlignment.end", K::MainAxis(Main::End)),
    ("MainAxisAlignment.center", K::MainAxis(Main::Center)),
    (
        "MainAxisAlignment.spaceBetween",
        K::MainAxis(Main::SpaceBetween),
    ),
    (
        "MainAxisAlignment.spaceAround",
        K::MainAxis(Main::SpaceAround),
    ),
    (
        "MainAxisAlignment.spaceEvenly",
        K::MainAxis(Main::SpaceEvenly),
    ),
    ("CrossAxisAlignment.start", K::CrossAxis(Cross::Start)),
    ("CrossAxisAlignment.end", K::CrossAxis(Cross::End)),
    ("CrossAxisAlignment.center", K::CrossAxis(Cross::Center)),
    ("CrossAxisAlignment.stretch", K::CrossAxis(Cross::Stretch)),
    ("MainAxisSize.min", K::MainAxisMin(true)),
    ("MainAxisSize.max", K::MainAxisMin(false)),
    ("FontWeight.normal", K::FontWeight(400)),
    ("FontWeight.bold", K::FontWeight(700)),
    ("FontWeight.w100", K::FontWeight(100)),
    ("FontWeight.w200", K::FontWeight(200)),
    ("FontWeight.w300", K::FontWeight(300)),
    ("FontWeight.w400", K::FontWeight(400)),
    ("FontWeight.w500", K::FontWeight(500)),
    ("FontWeight.w600", K::FontWeight(600)),
    ("FontWeight.w700", K::FontWeight(700)),
    ("FontWeight.w800", K::FontWeight(800)),
    ("FontWeight.w900", K::FontWeight(900)),
    ("TextAlign.left", K::TextAlign(TextAlign::Left)),
    ("TextAlign.start", K::TextAlign(TextAlign::Left)),
    ("TextAlign.justify", K::TextAlign(TextAlign::Left)),
    ("TextAlign.right", K::TextAlign(TextAlign::Right)),
    ("TextAlign.end", K::TextAlign(TextAlign::Right)),
    ("TextAlign.center", K::TextAlign(TextAlign::Center)),
    ("BoxFit.contain", K::BoxFit(BoxFit::Contain)),
    ("BoxFit.cover", K::BoxFit(BoxFit::Cover)),
    ("BoxFit.fill", K::BoxFit(BoxFit::Fill)),
    ("Alignment.topLeft", K::Alignment(-1.0, -1.0)),
    ("Alignment.topCenter", K::Alignment(0.0, -1.0)),
    ("Alignment.topRight", K::Alignment(1.0, -1.0)),
    ("Alignment.centerLeft", K::Alignment(-1.0, 0.0)),
    ("Alignment.center", K::Alignment(0.0, 0.0)),
    ("Alignment.centerRight", K::Alignment(1.0, 0.0)),
    ("Alignment.bottomLeft", K::Alignment(-1.0, 1.0)),
    ("Alignment.bottomCenter", K::Alignment(0.0, 1.0)),
    ("Alignment.bottomRight", K::Alignment(1.0, 1.0)),
    ("EdgeInsets.zero", K::Zero),
    ("BorderRadius.zero", K::Zero),
];

/// The constant called `name` (`Colors.white`), if the table has it.
pub fn constant(name: &str) -> Option<Constant> {
    CONSTANTS.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
}

/// True when `group` names a constant group of the table (`Colors`, `FontWeight`, ...), so
/// `group.x` with an unknown `x` is reported as an unknown constant of that group.
pub fn is_constant_group(group: &str) -> bool {
    CONSTANTS
        .iter()
        .any(|(n, _)| n.split_once('.').is_some_and(|(g, _)| g == group))
}

/// Methods a template may call on a value (`price.toUpperCase()`): text formatting only.
pub const METHODS: &[&str] = &[
    "toString",
    "toUpperCase",
    "toLowerCase",
    "trim",
    "toStringAsFixed",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        for (i, c) in CONSTRUCTORS.iter().enumerate() {
            assert!(
                CONSTRUCTORS[..i].iter().all(|o| o.name != c.name),
                "{}",
                c.name
            );
            assert!(c.required.iter().all(|r| c.named.contains(r)), "{}", c.name);
        }
        for (i, (n, _)) in CONSTANTS.iter().enumerate() {
            assert!(CONSTANTS[..i].iter().all(|(o, _)| o != n), "{n}");
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(
            constructor("EdgeInsets.all").map(|c| c.ctor),
            Some(Ctor::EdgeInsetsAll)
        );
        assert!(constructor("ListView").is_none());
        assert_eq!(constant("Colors.white"), Some(Constant::Color(0xFFFF_FFFF)));
        assert!(is_constant_group("Colors"));
        assert!(!is_constant_group("Colours"));
    }
}
