// CQL tokenizer: the tokens of one statement's text.

package sim

import (
	"fmt"
	"strings"
)

type tokKind int

const (
	tkEOF tokKind = iota
	tkIdent
	tkQuotedIdent
	tkString
	tkNumber
	tkHex
	tkPunct
)

type token struct {
	kind tokKind
	text string // identifiers lower-cased unless quoted; strings unescaped
	pos  int
}

func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-', c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '\'':
			text, next, err := scanQuoted(src, i, "string literal")
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tkString, text, i})
			i = next
		case c == '"':
			text, next, err := scanQuoted(src, i, "quoted identifier")
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tkQuotedIdent, text, i})
			i = next
		case c == '0' && i+1 < len(src) && (src[i+1] == 'x' || src[i+1] == 'X'):
			j := i + 2
			for j < len(src) && isHex(src[j]) {
				j++
			}
			toks = append(toks, token{tkHex, src[i+2 : j], i})
			i = j
		case isDigit(c) || (c == '-' && i+1 < len(src) && isDigit(src[i+1])):
			j := i + 1
			for j < len(src) && (isDigit(src[j]) || src[j] == '.' || src[j] == 'e' || src[j] == 'E') {
				j++
			}
			toks = append(toks, token{tkNumber, src[i:j], i})
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && (isIdentStart(src[j]) || isDigit(src[j])) {
				j++
			}
			toks = append(toks, token{tkIdent, strings.ToLower(src[i:j]), i})
			i = j
		case c == '<' || c == '>' || c == '!':
			if i+1 < len(src) && src[i+1] == '=' {
				toks = append(toks, token{tkPunct, src[i : i+2], i})
				i += 2
			} else {
				toks = append(toks, token{tkPunct, src[i : i+1], i})
				i++
			}
		case strings.IndexByte("(),;.*=?{}:[]+-", c) >= 0:
			toks = append(toks, token{tkPunct, src[i : i+1], i})
			i++
		default:
			return nil, fmt.Errorf("unexpected character %q at position %d", c, i)
		}
	}
	toks = append(toks, token{kind: tkEOF, pos: len(src)})
	return toks, nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isHex(c byte) bool        { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }
func isIdentStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// scanQuoted reads the quoted text starting at src[i] (its quote character,
// ' or "), where a doubled quote stands for one. It returns the text and the
// index just past the closing quote.
func scanQuoted(src string, i int, what string) (string, int, error) {
	q := src[i]
	var b strings.Builder
	j := i + 1
	for {
		if j >= len(src) {
			return "", 0, fmt.Errorf("unterminated %s at character %d", what, i)
		}
		if src[j] == q {
			if j+1 < len(src) && src[j+1] == q {
				b.WriteByte(q)
				j += 2
				continue
			}
			return b.String(), j + 1, nil
		}
		b.WriteByte(src[j])
		j++
	}
}
