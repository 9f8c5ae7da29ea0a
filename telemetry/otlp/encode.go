package otlp

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// This file encodes spans as an OTLP ExportTraceServiceRequest
// (opentelemetry/proto/collector/trace/v1/trace_service.proto) with
// protowire alone. The generated message types would do the same, but
// their package for the collector's request also holds the gRPC service,
// and gRPC links net/trace and html/template, whose reflection keeps the
// linker from dropping unused methods in the whole program (see
// docs/BENCHMARKS.md, "The binary"). The field numbers are the proto
// files'; encode_test.go decodes the result with the generated types.

// Field numbers of the OTLP messages this file writes.
const (
	// ExportTraceServiceRequest
	fRequestResourceSpans = 1
	// ResourceSpans
	fResourceSpansResource   = 1
	fResourceSpansScopeSpans = 2
	fResourceSpansSchemaURL  = 3
	// Resource
	fResourceAttributes = 1
	// ScopeSpans
	fScopeSpansScope     = 1
	fScopeSpansSpans     = 2
	fScopeSpansSchemaURL = 3
	// InstrumentationScope
	fScopeName       = 1
	fScopeVersion    = 2
	fScopeAttributes = 3
	// Span
	fSpanTraceID            = 1
	fSpanSpanID             = 2
	fSpanTraceState         = 3
	fSpanParentSpanID       = 4
	fSpanName               = 5
	fSpanKind               = 6
	fSpanStartTime          = 7
	fSpanEndTime            = 8
	fSpanAttributes         = 9
	fSpanDroppedAttributes  = 10
	fSpanEvents             = 11
	fSpanDroppedEvents      = 12
	fSpanLinks              = 13
	fSpanDroppedLinks       = 14
	fSpanStatus             = 15
	fSpanFlags              = 16
	fEventTime              = 1
	fEventName              = 2
	fEventAttributes        = 3
	fEventDroppedAttributes = 4
	fLinkTraceID            = 1
	fLinkSpanID             = 2
	fLinkTraceState         = 3
	fLinkAttributes         = 4
	fLinkDroppedAttributes  = 5
	fLinkFlags              = 6
	fStatusMessage          = 2
	fStatusCode             = 3
	// KeyValue, AnyValue, ArrayValue, KeyValueList
	fKeyValueKey    = 1
	fKeyValueValue  = 2
	fAnyString      = 1
	fAnyBool        = 2
	fAnyInt         = 3
	fAnyDouble      = 4
	fAnyArray       = 5
	fAnyKVList      = 6
	fAnyBytes       = 7
	fArrayValues    = 1
	fKVListValues   = 1
	statusCodeOK    = 1
	statusCodeError = 2
	// SpanFlags: the parent's is-remote flag is known and set.
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// encodeRequest appends to b the ExportTraceServiceRequest of spans: one
// ResourceSpans per resource, one ScopeSpans per instrumentation scope,
// in the order they first appear.
func encodeRequest(b []byte, spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct {
		res   *resource.Resource
		scope instrumentation.Scope
	}
	var resources []*resource.Resource
	scopes := map[*resource.Resource][]instrumentation.Scope{}
	byScope := map[scopeKey][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		res, scope := s.Resource(), s.InstrumentationScope()
		if _, ok := scopes[res]; !ok {
			resources = append(resources, res)
			scopes[res] = nil
		}
		k := scopeKey{res, scope}
		if _, ok := byScope[k]; !ok {
			scopes[res] = append(scopes[res], scope)
		}
		byScope[k] = append(byScope[k], s)
	}
	for _, res := range resources {
		b = message(b, fRequestResourceSpans, func(b []byte) []byte {
			b = message(b, fResourceSpansResource, func(b []byte) []byte {
				return attributes(b, fResourceAttributes, res.Attributes())
			})
			for _, scope := range scopes[res] {
				b = message(b, fResourceSpansScopeSpans, func(b []byte) []byte {
					b = message(b, fScopeSpansScope, func(b []byte) []byte {
						b = str(b, fScopeName, scope.Name)
						b = str(b, fScopeVersion, scope.Version)
						return attributes(b, fScopeAttributes, scope.Attributes.ToSlice())
					})
					for _, s := range byScope[scopeKey{res, scope}] {
						b = message(b, fScopeSpansSpans, func(b []byte) []byte { return span(b, s) })
					}
					return str(b, fScopeSpansSchemaURL, scope.SchemaURL)
				})
			}
			return str(b, fResourceSpansSchemaURL, res.SchemaURL())
		})
	}
	return b
}

// span appends the fields of one Span message.
func span(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = bytesField(b, fSpanTraceID, tid[:])
	b = bytesField(b, fSpanSpanID, sid[:])
	b = str(b, fSpanTraceState, sc.TraceState().String())
	if parent.SpanID().IsValid() {
		pid := parent.SpanID()
		b = bytesField(b, fSpanParentSpanID, pid[:])
	}
	b = str(b, fSpanName, s.Name())
	b = varint(b, fSpanKind, uint64(spanKind(s.SpanKind())))
	b = fixed64(b, fSpanStartTime, unixNano(s.StartTime().UnixNano()))
	b = fixed64(b, fSpanEndTime, unixNano(s.EndTime().UnixNano()))
	b = attributes(b, fSpanAttributes, s.Attributes())
	b = varint(b, fSpanDroppedAttributes, uint64(s.DroppedAttributes()))
	for _, e := range s.Events() {
		b = message(b, fSpanEvents, func(b []byte) []byte {
			b = fixed64(b, fEventTime, unixNano(e.Time.UnixNano()))
			b = str(b, fEventName, e.Name)
			b = attributes(b, fEventAttributes, e.Attributes)
			return varint(b, fEventDroppedAttributes, uint64(e.DroppedAttributeCount))
		})
	}
	b = varint(b, fSpanDroppedEvents, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		b = message(b, fSpanLinks, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = bytesField(b, fLinkTraceID, ltid[:])
			b = bytesField(b, fLinkSpanID, lsid[:])
			b = str(b, fLinkTraceState, l.SpanContext.TraceState().String())
			b = attributes(b, fLinkAttributes, l.Attributes)
			b = varint(b, fLinkDroppedAttributes, uint64(l.DroppedAttributeCount))
			return fixed32(b, fLinkFlags, flags(l.SpanContext.TraceFlags(), l.SpanContext))
		})
	}
	b = varint(b, fSpanDroppedLinks, uint64(s.DroppedLinks()))
	if st := s.Status(); st.Code != codes.Unset {
		b = message(b, fSpanStatus, func(b []byte) []byte {
			b = str(b, fStatusMessage, st.Description)
			code := uint64(statusCodeOK)
			if st.Code == codes.Error {
				code = statusCodeError
			}
			return varint(b, fStatusCode, code)
		})
	}
	return fixed32(b, fSpanFlags, flags(sc.TraceFlags(), parent))
}

// flags are a span's or a link's SpanFlags: its own trace flags, and
// whether remote, the context it names (a span's parent, a link's span)
// came from another process.
func flags(own trace.TraceFlags, remote trace.SpanContext) uint32 {
	f := uint32(own) | flagHasIsRemote
	if remote.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// spanKind maps a trace.SpanKind to OTLP's SpanKind, which numbers them
// the same way but for the unspecified kind, internal to the SDK.
func spanKind(k trace.SpanKind) trace.SpanKind {
	if k < trace.SpanKindInternal || k > trace.SpanKindConsumer {
		return trace.SpanKindInternal
	}
	return k
}

// unixNano is t as OTLP's unsigned nanoseconds, 0 for a time before 1970.
func unixNano(ns int64) uint64 {
	if ns < 0 {
		return 0
	}
	return uint64(ns)
}

// attributes appends each attribute as a KeyValue field numbered num.
func attributes(b []byte, num protowire.Number, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = message(b, num, func(b []byte) []byte {
			b = str(b, fKeyValueKey, string(kv.Key))
			return message(b, fKeyValueValue, func(b []byte) []byte { return anyValue(b, kv.Value) })
		})
	}
	return b
}

// anyValue appends the fields of the AnyValue of v.
func anyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		return boolField(b, fAnyBool, v.AsBool())
	case attribute.INT64:
		return protowire.AppendVarint(protowire.AppendTag(b, fAnyInt, protowire.VarintType), uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return protowire.AppendFixed64(protowire.AppendTag(b, fAnyDouble, protowire.Fixed64Type), math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		return protowire.AppendString(protowire.AppendTag(b, fAnyString, protowire.BytesType), v.AsString())
	case attribute.BYTESLICE:
		return protowire.AppendBytes(protowire.AppendTag(b, fAnyBytes, protowire.BytesType), v.AsByteSlice())
	case attribute.BOOLSLICE:
		return array(b, len(v.AsBoolSlice()), func(b []byte, i int) []byte { return boolField(b, fAnyBool, v.AsBoolSlice()[i]) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		return array(b, len(s), func(b []byte, i int) []byte {
			return protowire.AppendVarint(protowire.AppendTag(b, fAnyInt, protowire.VarintType), uint64(s[i]))
		})
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		return array(b, len(s), func(b []byte, i int) []byte {
			return protowire.AppendFixed64(protowire.AppendTag(b, fAnyDouble, protowire.Fixed64Type), math.Float64bits(s[i]))
		})
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		return array(b, len(s), func(b []byte, i int) []byte {
			return protowire.AppendString(protowire.AppendTag(b, fAnyString, protowire.BytesType), s[i])
		})
	case attribute.SLICE:
		s := v.AsSlice()
		return array(b, len(s), func(b []byte, i int) []byte { return anyValue(b, s[i]) })
	case attribute.MAP:
		return message(b, fAnyKVList, func(b []byte) []byte { return attributes(b, fKVListValues, v.AsMap()) })
	}
	return b // EMPTY: an AnyValue with no field set
}

// array appends an ArrayValue of n values, value(b, i) appending the
// fields of the i-th AnyValue.
func array(b []byte, n int, value func(b []byte, i int) []byte) []byte {
	return message(b, fAnyArray, func(b []byte) []byte {
		for i := range n {
			b = message(b, fArrayValues, func(b []byte) []byte { return value(b, i) })
		}
		return b
	})
}

// message appends a length-delimited field numbered num whose content
// fill appends. The length is written after the content, which is moved
// once if its varint needs more than the byte reserved for it.
func message(b []byte, num protowire.Number, fill func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	b = append(b, 0) // room for a length below 128
	b = fill(b)
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	size := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, size-1)...)
	copy(b[at+size:], b[at+1:at+1+n])
	protowire.AppendVarint(b[at:at], uint64(n))
	return b
}

// str, bytesField, boolField, varint, fixed32 and fixed64 append a field,
// or nothing for the zero value, as proto3 encoders do.
func str(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

func bytesField(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

func boolField(b []byte, num protowire.Number, v bool) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), protowire.EncodeBool(v))
}

func varint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
}

func fixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendFixed32(protowire.AppendTag(b, num, protowire.Fixed32Type), v)
}

func fixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendFixed64(protowire.AppendTag(b, num, protowire.Fixed64Type), v)
}
