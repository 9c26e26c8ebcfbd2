/**
 * The provider-neutral content vocabulary (V-1, V-2): four core blocks, `text`, `reasoning`,
 * `tool-call` and `tool-result`, in an OPEN union.
 *
 * Extending: declare a new block by declaration merging of {@link ContentBlockMap}
 *
 * ```ts
 * declare module "effect-harness/Llm/ContentBlock" {
 *   interface ContentBlockMap { citation: { readonly type: "citation"; readonly url: string } }
 * }
 * ```
 *
 * At run time a block whose `type` is not a core one decodes as-is when it is lossless JSON, and
 * re-encodes byte-identically: the log, projection and assembler pass it through; serializers
 * skip it. Core blocks are validated strictly (every field, its type). Keys a core block does not
 * declare are preserved by {@link decode} so that a round trip never loses data.
 *
 * @since 0.1.0
 */
import type * as Brand from "effect/Brand"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as Json from "./Json.js"

/**
 * A tool call's id as chosen by the model. A plain string at run time (V-10).
 *
 * @since 0.1.0
 * @category models
 */
export type CallId = string & Brand.Brand<"CallId">

/**
 * Schema of {@link CallId}; any string is accepted (construction does no validation, V-10).
 *
 * @since 0.1.0
 * @category schemas
 */
export const CallId = Schema.String.pipe(Schema.brand("CallId"))

/**
 * Brands a plain string as a {@link CallId} without validation.
 *
 * @since 0.1.0
 * @category constructors
 */
export const callId = (id: string): CallId => id as CallId

/**
 * Plain text.
 *
 * @since 0.1.0
 * @category models
 */
export interface TextBlock {
  readonly type: "text"
  readonly text: string
}

/**
 * Model reasoning ("thinking") text.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReasoningBlock {
  readonly type: "reasoning"
  readonly text: string
}

/**
 * A tool call; `arguments` is the model's raw JSON text, never parsed in the vocabulary (V-1).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolCallBlock {
  readonly type: "tool-call"
  readonly id: CallId
  readonly name: string
  readonly arguments: string
}

/**
 * The result of a tool call; lives inside a user-role message (there is no tool role, V-1).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolResultBlock {
  readonly type: "tool-result"
  readonly toolCallId: CallId
  readonly content: ReadonlyArray<ContentBlock>
  readonly isError?: boolean
}

/**
 * The merge-extensible map of block types, keyed by `type`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ContentBlockMap {
  readonly text: TextBlock
  readonly reasoning: ReasoningBlock
  readonly "tool-call": ToolCallBlock
  readonly "tool-result": ToolResultBlock
}

/**
 * Any content block: the core four plus whatever the program declared by merging.
 *
 * @since 0.1.0
 * @category models
 */
export type ContentBlock = ContentBlockMap[keyof ContentBlockMap]

/**
 * The core block type names, closed.
 *
 * @since 0.1.0
 * @category models
 */
export const coreTypes: ReadonlySet<string> = new Set(["text", "reasoning", "tool-call", "tool-result"])

/**
 * `true` for a block of one of the four core types.
 *
 * @since 0.1.0
 * @category guards
 */
export const isCore = (block: { readonly type: string }): boolean => coreTypes.has(block.type)

/**
 * Schema of {@link TextBlock}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TextBlock: Schema.Codec<TextBlock> = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String
})

/**
 * Schema of {@link ReasoningBlock}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReasoningBlock: Schema.Codec<ReasoningBlock> = Schema.Struct({
  type: Schema.Literal("reasoning"),
  text: Schema.String
})

/**
 * Schema of {@link ToolCallBlock}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCallBlock: Schema.Codec<ToolCallBlock, {
  readonly type: "tool-call"
  readonly id: string
  readonly name: string
  readonly arguments: string
}> = Schema.Struct({
  type: Schema.Literal("tool-call"),
  id: CallId,
  name: Schema.String,
  arguments: Schema.String
})

/**
 * An extension block: any lossless-JSON object whose `type` is a string that is not a core type.
 * Typed as {@link ContentBlock} because consumers must handle known tags and pass the rest through.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExtensionBlock: Schema.Codec<ContentBlock> = Schema.declare(
  (u: unknown): u is ContentBlock =>
    typeof u === "object" && u !== null && !Array.isArray(u) &&
    typeof (u as { type?: unknown }).type === "string" && !coreTypes.has((u as { type: string }).type) &&
    Json.isJson(u),
  { identifier: "ExtensionBlock", description: "a content block of a type declared by an extension" }
)

/**
 * Schema of {@link ToolResultBlock} (recursive through {@link ContentBlock}).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolResultBlock: Schema.Codec<ToolResultBlock, ToolResultBlockEncoded> = Schema.Struct({
  type: Schema.Literal("tool-result"),
  toolCallId: CallId,
  content: Schema.Array(Schema.suspend((): Schema.Codec<ContentBlock, ContentBlockEncoded> => ContentBlock)),
  isError: Schema.optionalKey(Schema.Boolean)
})

/**
 * Encoded form of a {@link ToolResultBlock}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolResultBlockEncoded {
  readonly type: "tool-result"
  readonly toolCallId: string
  readonly content: ReadonlyArray<ContentBlockEncoded>
  readonly isError?: boolean
}

/**
 * Encoded (wire/log) form of any content block.
 *
 * @since 0.1.0
 * @category models
 */
export type ContentBlockEncoded =
  | TextBlock
  | ReasoningBlock
  | { readonly type: "tool-call"; readonly id: string; readonly name: string; readonly arguments: string }
  | ToolResultBlockEncoded
  | ContentBlock

/**
 * Schema of any {@link ContentBlock}: core blocks strictly, extension blocks verbatim.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContentBlock: Schema.Codec<ContentBlock, ContentBlockEncoded> = Schema.Union([
  TextBlock,
  ReasoningBlock,
  ToolCallBlock,
  ToolResultBlock,
  ExtensionBlock
]).annotate({ identifier: "ContentBlock" })

/**
 * Validates against `decodeStrict` and yields the input itself. Content-block decoding is the
 * identity on valid input (no transformations, brands only check), so the input is the decoded
 * value with every key a core block does not declare still in place, also nested in a tool
 * result. (Effect 4 has no `onExcessProperty: "preserve"`: its decoders strip undeclared keys.)
 */
const preserving = <A>(
  decodeStrict: (u: unknown, options?: SchemaAST.ParseOptions) => Effect.Effect<A, Schema.SchemaError>
) =>
(u: unknown, options?: SchemaAST.ParseOptions): Effect.Effect<A, Schema.SchemaError> =>
  Effect.as(decodeStrict(u, options), u as A)

/**
 * Decodes one block, preserving keys a core block does not declare (lossless round trip).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = preserving(Schema.decodeUnknownEffect(ContentBlock))

/**
 * Decodes a block list, preserving undeclared keys.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeArray = preserving(Schema.decodeUnknownEffect(Schema.Array(ContentBlock)))


/**
 * Constructs a text block.
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (text: string): TextBlock => ({ type: "text", text })

/**
 * Constructs a reasoning block.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reasoning = (text: string): ReasoningBlock => ({ type: "reasoning", text })

/**
 * Constructs a tool-call block.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolCall = (id: string, name: string, args: string): ToolCallBlock => ({
  type: "tool-call",
  id: callId(id),
  name,
  arguments: args
})

/**
 * Constructs a tool-result block; `isError` is always present.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolResult = (
  toolCallId: string,
  content: ReadonlyArray<ContentBlock>,
  isError = false
): ToolResultBlock => ({ type: "tool-result", toolCallId: callId(toolCallId), content, isError })

/**
 * Concatenates the text of the `text` blocks, no separator (the "flatten" of P-3).
 *
 * @since 0.1.0
 * @category utils
 */
export const flattenText = (blocks: ReadonlyArray<ContentBlock>): string => {
  let out = ""
  for (const b of blocks) if (b.type === "text") out += b.text
  return out
}
