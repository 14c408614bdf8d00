// Package parquetchecktest makes corrupt parquet files for tests: a valid
// file whose footer says something else about its column chunks, or
// whose page headers are wrong, as a broken or hostile writer's would.
package parquetchecktest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// Fields of a column chunk's ColumnMetaData (parquet.thrift) that
// SetChunkField can set.
const (
	TotalCompressedSize int16 = 7
	DataPageOffset      int16 = 9
)

// SetChunkField returns a copy of the parquet file raw whose footer sets
// field (TotalCompressedSize, DataPageOffset) of every column chunk of
// every row group to value; the data pages are left as they are. It
// errors when raw is not a plain (unencrypted) parquet file or has no
// column chunk.
func SetChunkField(raw []byte, field int16, value int64) ([]byte, error) {
	if len(raw) < 12 || !bytes.Equal(raw[:4], []byte("PAR1")) || !bytes.Equal(raw[len(raw)-4:], []byte("PAR1")) {
		return nil, errors.New("not a plain parquet file")
	}
	n := int(binary.LittleEndian.Uint32(raw[len(raw)-8:]))
	if n > len(raw)-12 {
		return nil, errors.New("footer longer than the file")
	}
	start := len(raw) - 8 - n
	w := &rewriter{in: raw[start : len(raw)-8], field: field, value: value}
	if err := w.copyStruct(levelFile); err != nil {
		return nil, fmt.Errorf("footer: %w", err)
	}
	if w.set == 0 {
		return nil, errors.New("footer has no column chunk")
	}
	out := append(append([]byte{}, raw[:start]...), w.out...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(w.out)))
	return append(out, "PAR1"...), nil
}

// FirstPagesMistyped returns a copy of the parquet file raw where the
// first page of every column chunk claims another page type, whose
// header it lacks: a dictionary page or a v2 data page says it is a v1
// data page, a v1 data page says it is a v2 one. The footer stays sound,
// the pages do not (arrow-go dereferences the missing header). It errors
// when raw has no page header it can patch in place.
func FirstPagesMistyped(raw []byte) ([]byte, error) {
	rdr, err := file.NewParquetReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(raw)
	md, n := rdr.MetaData(), 0
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		for c := 0; c < md.Schema.NumColumns(); c++ {
			cc, err := md.RowGroup(rg).ColumnChunk(c)
			if err != nil {
				return nil, err
			}
			off := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < off {
				off = cc.DictionaryPageOffset()
			}
			// A page header starts with field 1 (type, i32): 0x15, then
			// the type zigzagged: DATA_PAGE 0, DICTIONARY_PAGE 4 (2),
			// DATA_PAGE_V2 6 (3).
			if off < 0 || off+2 > int64(len(out)) || out[off] != 0x15 {
				continue
			}
			switch out[off+1] {
			case 0x04, 0x06:
				out[off+1] = 0x00
			case 0x00:
				out[off+1] = 0x06
			default:
				continue
			}
			n++
		}
	}
	if n == 0 {
		return nil, errors.New("no page header to patch")
	}
	return out, nil
}

// Where a struct is on the path FileMetaData.row_groups (4) →
// RowGroup.columns (1) → ColumnChunk.meta_data (3) → ColumnMetaData.
const (
	levelOther = iota
	levelFile
	levelRowGroup
	levelChunk
	levelChunkMeta
)

// rewriter copies a thrift compact-protocol struct from in to out,
// replacing field of every ColumnMetaData.
type rewriter struct {
	in, out []byte
	pos     int
	field   int16
	value   int64
	set     int
}

func (w *rewriter) next() (byte, error) {
	if w.pos >= len(w.in) {
		return 0, errors.New("truncated")
	}
	b := w.in[w.pos]
	w.pos++
	return b, nil
}

// copyBytes copies n raw bytes.
func (w *rewriter) copyBytes(n uint64) error {
	if n > uint64(len(w.in)-w.pos) {
		return errors.New("truncated")
	}
	w.out = append(w.out, w.in[w.pos:w.pos+int(n)]...)
	w.pos += int(n)
	return nil
}

// uvarint reads a varint, copying it when copy is set.
func (w *rewriter) uvarint(copy bool) (uint64, error) {
	v, n := binary.Uvarint(w.in[w.pos:])
	if n <= 0 {
		return 0, errors.New("bad varint")
	}
	if copy {
		w.out = append(w.out, w.in[w.pos:w.pos+n]...)
	}
	w.pos += n
	return v, nil
}

func (w *rewriter) copyStruct(level int) error {
	var id int16
	for {
		h, err := w.next()
		if err != nil {
			return err
		}
		w.out = append(w.out, h)
		if h == 0 { // stop
			return nil
		}
		t := h & 0x0f
		if d := int16(h >> 4); d != 0 {
			id += d
		} else {
			v, err := w.uvarint(true)
			if err != nil {
				return err
			}
			id = int16(v>>1) ^ -int16(v&1)
		}
		if level == levelChunkMeta && id == w.field && t == 6 { // i64
			if _, err := w.uvarint(false); err != nil {
				return err
			}
			w.out = binary.AppendUvarint(w.out, uint64(w.value<<1)^uint64(w.value>>63))
			w.set++
			continue
		}
		child := levelOther
		switch {
		case level == levelFile && id == 4:
			child = levelRowGroup
		case level == levelRowGroup && id == 1:
			child = levelChunk
		case level == levelChunk && id == 3:
			child = levelChunkMeta
		}
		if err := w.copyValue(t, child, false); err != nil {
			return err
		}
	}
}

// copyValue copies one value of compact type t; a struct is copied at
// level. A bool is in its field's header, or one byte in a collection.
func (w *rewriter) copyValue(t byte, level int, inCollection bool) error {
	switch t {
	case 1, 2: // bool
		if inCollection {
			return w.copyBytes(1)
		}
		return nil
	case 3: // byte
		return w.copyBytes(1)
	case 4, 5, 6: // i16, i32, i64
		_, err := w.uvarint(true)
		return err
	case 7: // double
		return w.copyBytes(8)
	case 8: // binary
		n, err := w.uvarint(true)
		if err != nil {
			return err
		}
		return w.copyBytes(n)
	case 9, 10: // list, set
		h, err := w.next()
		if err != nil {
			return err
		}
		w.out = append(w.out, h)
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = w.uvarint(true); err != nil {
				return err
			}
		}
		for i := uint64(0); i < n; i++ {
			if err := w.copyValue(h&0x0f, level, true); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		n, err := w.uvarint(true)
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.next()
		if err != nil {
			return err
		}
		w.out = append(w.out, kv)
		for i := uint64(0); i < n; i++ {
			if err := w.copyValue(kv>>4, levelOther, true); err != nil {
				return err
			}
			if err := w.copyValue(kv&0x0f, levelOther, true); err != nil {
				return err
			}
		}
		return nil
	case 12: // struct
		return w.copyStruct(level)
	}
	return fmt.Errorf("unknown compact type %d", t)
}
