//! The per-game asset library (item art). An upload is accepted only when its bytes are a
//! PNG, JPEG or WebP image, whatever its name or declared type says.

use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::Collection;

/// A supported image format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    /// PNG.
    Png,
    /// JPEG.
    Jpeg,
    /// WebP.
    Webp,
}

impl ImageKind {
    /// Recognises the format from the file's magic bytes.
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Self::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Self::Jpeg)
        } else if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(Self::Webp)
        } else {
            None
        }
    }

    /// MIME type served back.
    pub fn mime(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Webp => "image/webp",
        }
    }

    fn tag(self) -> u8 {
        match self {
            Self::Png => 1,
            Self::Jpeg => 2,
            Self::Webp => 3,
        }
    }

    fn from_tag(tag: u8) -> Option<Self> {
        match tag {
            1 => Some(Self::Png),
            2 => Some(Self::Jpeg),
            3 => Some(Self::Webp),
            _ => None,
        }
    }
}

/// Where an asset is served.
pub fn url(game_id: Uuid, asset_id: &str) -> String {
    format!("/v1/games/{game_id}/assets/{asset_id}")
}

/// Stores an image; its id is derived from its content, so re-uploading is idempotent.
pub async fn put(state: &AppState, game_id: Uuid, bytes: &[u8]) -> ApiResult<(String, ImageKind)> {
    let kind = ImageKind::sniff(bytes).ok_or_else(|| {
        ApiError::UnsupportedMediaType(
            "the file is not a PNG, JPEG or WebP image (checked by its content)".into(),
        )
    })?;
    let digest = Sha256::digest(bytes);
    let asset_id: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    let mut value = Vec::with_capacity(bytes.len() + 1);
    value.push(kind.tag());
    value.extend_from_slice(bytes);
    state
        .store
        .put_all(
            Collection::game(game_id, "assets"),
            vec![(asset_id.clone(), value)],
        )
        .await?;
    Ok((asset_id, kind))
}

/// An image and its format.
pub async fn get(
    state: &AppState,
    game_id: Uuid,
    asset_id: &str,
) -> ApiResult<(ImageKind, Vec<u8>)> {
    let value = state
        .store
        .get(Collection::game(game_id, "assets"), asset_id)
        .await?
        .ok_or(ApiError::NotFound("asset"))?;
    let (tag, data) = value
        .split_first()
        .ok_or_else(|| ApiError::Internal("empty asset".into()))?;
    let kind =
        ImageKind::from_tag(*tag).ok_or_else(|| ApiError::Internal("bad asset tag".into()))?;
    Ok((kind, data.to_vec()))
}

/// Whether an asset exists (items may only name existing art).
pub async fn exists(state: &AppState, game_id: Uuid, asset_id: &str) -> ApiResult<bool> {
    Ok(state
        .store
        .get(Collection::game(game_id, "assets"), asset_id)
        .await?
        .is_some())
}
