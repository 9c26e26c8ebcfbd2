/**
 * Test support: a minimal OTLP trace payload decoder (protobuf wire format and OTLP/JSON) giving each span's name,
 * ids, parent and attributes, so export tests assert the span tree the receiver got, not bytes.
 */

/** One decoded span. */
export interface DecodedSpan {
  readonly name: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly attributes: Readonly<Record<string, string | number | boolean>>
  /** the span's events (OTLP/JSON only) */
  readonly events?: ReadonlyArray<{ readonly name: string; readonly attributes: Readonly<Record<string, string | number | boolean>> }>
}

type Field = { readonly field: number; readonly wire: number; readonly value: Buffer | bigint }

const varint = (buf: Buffer, at: number): readonly [bigint, number] => {
  let result = 0n
  let shift = 0n
  let i = at
  for (;;) {
    const byte = buf[i++]
    if (byte === undefined) throw new Error("truncated varint")
    result |= BigInt(byte & 0x7f) << shift
    if ((byte & 0x80) === 0) return [result, i]
    shift += 7n
  }
}

/** The fields of one protobuf message. */
const fields = (buf: Buffer): Array<Field> => {
  const out: Array<Field> = []
  let at = 0
  while (at < buf.length) {
    const [tag, next] = varint(buf, at)
    at = next
    const field = Number(tag >> 3n)
    const wire = Number(tag & 7n)
    if (wire === 0) {
      const [value, after] = varint(buf, at)
      out.push({ field, wire, value })
      at = after
    } else if (wire === 1) {
      out.push({ field, wire, value: buf.subarray(at, at + 8) })
      at += 8
    } else if (wire === 2) {
      const [length, after] = varint(buf, at)
      out.push({ field, wire, value: buf.subarray(after, after + Number(length)) })
      at = after + Number(length)
    } else if (wire === 5) {
      out.push({ field, wire, value: buf.subarray(at, at + 4) })
      at += 4
    } else {
      throw new Error(`unsupported wire type ${wire}`)
    }
  }
  return out
}

const bytesOf = (fs: ReadonlyArray<Field>, n: number): Array<Buffer> =>
  fs.filter((f) => f.field === n && f.wire === 2).map((f) => f.value as Buffer)

const anyValue = (buf: Buffer): string | number | boolean => {
  const [f] = fields(buf)
  if (f === undefined) return ""
  switch (f.field) {
    case 1:
      return (f.value as Buffer).toString("utf8")
    case 2:
      return f.value === 1n
    case 3:
      return Number(f.value as bigint)
    case 4:
      return (f.value as Buffer).readDoubleLE(0)
    default:
      return (f.value as Buffer).toString("utf8")
  }
}

/** Spans of an OTLP/HTTP protobuf `ExportTraceServiceRequest`. */
export const protobufSpans = (body: Buffer): Array<DecodedSpan> =>
  bytesOf(fields(body), 1).flatMap((resourceSpans) =>
    bytesOf(fields(resourceSpans), 2).flatMap((scopeSpans) =>
      bytesOf(fields(scopeSpans), 2).map((spanBytes) => {
        const span = fields(spanBytes)
        const attributes: Record<string, string | number | boolean> = {}
        for (const kv of bytesOf(span, 9)) {
          const kvFields = fields(kv)
          const key = bytesOf(kvFields, 1)[0]?.toString("utf8") ?? ""
          const value = bytesOf(kvFields, 2)[0]
          attributes[key] = value === undefined ? "" : anyValue(value)
        }
        return {
          name: bytesOf(span, 5)[0]?.toString("utf8") ?? "",
          spanId: bytesOf(span, 2)[0]?.toString("hex") ?? "",
          parentSpanId: bytesOf(span, 4)[0]?.toString("hex") ?? "",
          attributes
        }
      })
    )
  )

interface JsonAnyValue {
  readonly stringValue?: string
  readonly intValue?: string | number
  readonly doubleValue?: number
  readonly boolValue?: boolean
  readonly arrayValue?: { readonly values?: ReadonlyArray<JsonAnyValue> }
}

type JsonAttributes = ReadonlyArray<{ readonly key: string; readonly value: JsonAnyValue }>

interface JsonSpan {
  readonly name: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly attributes?: JsonAttributes
  readonly events?: ReadonlyArray<{ readonly name: string; readonly attributes?: JsonAttributes }>
}

/** A scalar as itself; an array as the JSON text of its scalars. */
const jsonValue = (v: JsonAnyValue): string | number | boolean => {
  if (v.arrayValue !== undefined) return JSON.stringify((v.arrayValue.values ?? []).map(jsonValue))
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? ""
}

const jsonAttributes = (list: JsonAttributes | undefined): Record<string, string | number | boolean> => {
  const attributes: Record<string, string | number | boolean> = {}
  for (const a of list ?? []) attributes[a.key] = jsonValue(a.value)
  return attributes
}

/** Spans of an OTLP/JSON trace export body. */
export const jsonSpans = (body: Buffer): Array<DecodedSpan> => {
  const json = JSON.parse(body.toString("utf8")) as {
    readonly resourceSpans?: ReadonlyArray<{ readonly scopeSpans?: ReadonlyArray<{ readonly spans?: ReadonlyArray<JsonSpan> }> }>
  }
  return (json.resourceSpans ?? []).flatMap((r) =>
    (r.scopeSpans ?? []).flatMap((s) =>
      (s.spans ?? []).map((x) => ({
        name: x.name,
        spanId: x.spanId,
        parentSpanId: x.parentSpanId ?? "",
        attributes: jsonAttributes(x.attributes),
        events: (x.events ?? []).map((e) => ({ name: e.name, attributes: jsonAttributes(e.attributes) }))
      }))
    )
  )
}
