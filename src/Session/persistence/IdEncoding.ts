/**
 * Session id → file name encoding for the JSONL backend (D-9): injective and traversal-proof.
 *
 * - `[A-Za-z0-9._-]` is kept as is; every other UTF-16 code unit, and `~` itself, becomes
 *   `~xxxx` (four lower-case hex digits of the code unit). Lone surrogates are encoded like any
 *   other unit, so every JavaScript string has exactly one encoding.
 * - The ids `.` and `..` are escaped completely (`~002e`, `~002e~002e`), so no encoded name is a
 *   path component with a special meaning; `/`, `\` and NUL are always escaped.
 * - `""` is rejected.
 * - [DECISION] An encoded name longer than {@link MAX_ENCODED_LENGTH} characters is rejected, so
 *   that `<name>.jsonl.lock` and the temporary names used by the first write stay below the usual
 *   255-byte file-name limit.
 *
 * `decode` inverts `encode` exactly (`decode(encode(id)) === id`) and returns `undefined` for a
 * name that `encode` cannot produce, which is what makes the mapping injective.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"

/**
 * The longest accepted encoded name (characters, all ASCII).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_ENCODED_LENGTH = 200

/**
 * Why an id cannot be encoded.
 *
 * @since 0.1.0
 * @category models
 */
export type EncodeFailure = "empty" | "too-long"

const keep = (unit: number): boolean =>
  (unit >= 0x30 && unit <= 0x39) || // 0-9
  (unit >= 0x41 && unit <= 0x5a) || // A-Z
  (unit >= 0x61 && unit <= 0x7a) || // a-z
  unit === 0x2e || // .
  unit === 0x5f || // _
  unit === 0x2d // -

const escapeUnit = (unit: number): string => `~${unit.toString(16).padStart(4, "0")}`

/**
 * Encodes a session id as a file-name stem.
 *
 * @since 0.1.0
 * @category constructors
 */
export const encode = (id: string): Result.Result<string, EncodeFailure> => {
  if (id.length === 0) return Result.fail("empty")
  let out: string
  if (id === "." || id === "..") {
    out = escapeUnit(0x2e).repeat(id.length)
  } else {
    out = ""
    for (let i = 0; i < id.length; i++) {
      const unit = id.charCodeAt(i)
      out += keep(unit) ? id[i] : escapeUnit(unit)
    }
  }
  return out.length > MAX_ENCODED_LENGTH ? Result.fail("too-long") : Result.succeed(out)
}

const escapeRe = /^~[0-9a-f]{4}/

/**
 * Decodes a file-name stem produced by {@link encode}; `undefined` for anything `encode` cannot
 * produce (so listing ignores foreign files).
 *
 * @since 0.1.0
 * @category constructors
 */
export const decode = (name: string): string | undefined => {
  if (name.length === 0 || name === "." || name === "..") return undefined
  let out = ""
  let i = 0
  while (i < name.length) {
    const unit = name.charCodeAt(i)
    if (unit === 0x7e) {
      const m = escapeRe.exec(name.slice(i, i + 5))
      if (m === null) return undefined
      const decoded = Number.parseInt(name.slice(i + 1, i + 5), 16)
      // a kept unit escaped would be a second encoding of the same id (except the `.`/`..` ids)
      if (keep(decoded) && !(decoded === 0x2e && (name === "~002e" || name === "~002e~002e"))) return undefined
      out += String.fromCharCode(decoded)
      i += 5
    } else if (keep(unit)) {
      out += name[i]
      i += 1
    } else {
      return undefined
    }
  }
  return out
}
