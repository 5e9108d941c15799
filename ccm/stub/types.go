package stub

// RawValueType is the store's source type of content a purge cut out of a
// line: the raw JSON value, still encoded, which a restore splices back
// byte for byte. Content of any other type (claude-context-manager's) is decoded
// text, restored by value.
const RawValueType = "json"

// ArchiveType is the type of the record a purge with --archive-compacted
// writes in place of everything before the last compact boundary; its
// "archive" field holds the stub of the archived region and "kept" the
// number of following lines that are re-written copies.
const ArchiveType = "ccm-archive"
