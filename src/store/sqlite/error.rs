//! How SQLite's errors become [`StoreError`]s: a file this build cannot read is `Corrupt`
//! (500, logged); anything else (disk full, I/O error, a lock held too long) means the store
//! cannot serve now and is `Unavailable` (503, retry).

use rusqlite::ErrorCode;

use super::super::StoreError;

impl From<rusqlite::Error> for StoreError {
    fn from(err: rusqlite::Error) -> Self {
        let corrupt = match &err {
            rusqlite::Error::SqliteFailure(failure, _) => matches!(
                failure.code,
                ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase | ErrorCode::SchemaChanged
            ),
            rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::IntegralValueOutOfRange(..)
            | rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::Utf8Error(..) => true,
            _ => false,
        };
        if corrupt {
            StoreError::Corrupt(format!("SQLite: {err}"))
        } else {
            StoreError::Unavailable(format!("SQLite: {err}"))
        }
    }
}
