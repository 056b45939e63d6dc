// Input nested deeper than fxmlir's limit (256 levels, all brackets counted
// together) is refused with a located error instead of overflowing the
// parser's stack; within the limit it parses.
// RUN: python3 -c "print('func.func @f() attributes {a = ' + '[' * 7000 + ']' * 7000 + '} { return }')" > %t.deep.mlir
// RUN: not fxmlir-opt %t.deep.mlir 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: python3 -c "print('func.func @f(%%x: ' + 'tuple<' * 20000 + 'i32' + '>' * 20000 + ') { return }')" | not fxmlir-opt 2>&1 | FileCheck %s --check-prefix=STDIN
// RUN: python3 -c "print('func.func @f() attributes {a = ' + '[' * 250 + ']' * 250 + '} { return }')" | fxmlir-opt | FileCheck %s --check-prefix=OK

// DEEP: deep.mlir:1:287: error: input nests brackets, braces, parentheses, angle brackets and unary minus signs more than 256 levels deep
// STDIN: <stdin>:1:{{[0-9]+}}: error: input nests {{.*}} more than 256 levels deep
// OK: func.func @f() attributes {a = {{\[+}}

// Each unary minus of an affine expression recurses in the parser as a
// bracket does; a 15 000-long run crashed it (found by the fuzz target).
// Minus signs before a parenthesis count with it; negative numbers, binary
// minus and arrows end their run.
// RUN: python3 -c "print('#m = affine_map<(d0) -> (' + '-' * 15000 + 'd0)>')" | not fxmlir-opt 2>&1 | FileCheck %s --check-prefix=MINUS
// RUN: python3 -c "print('#m = affine_map<(d0) -> (' + '- (' * 200 + 'd0' + ')' * 200 + ')>')" | not fxmlir-opt 2>&1 | FileCheck %s --check-prefix=MINUS
// RUN: python3 -c "print('#m = affine_map<(d0) -> (' + '- ' * 200 + 'd0' + ' - d0' * 2000 + ')>\nfunc.func @f() attributes {m = #m, a = array<i64: ' + ', '.join(['-1'] * 2000) + '>} { return }')" | fxmlir-opt | FileCheck %s --check-prefix=MINUS-OK

// MINUS: <stdin>:1:{{[0-9]+}}: error: input nests brackets, braces, parentheses, angle brackets and unary minus signs more than 256 levels deep
// MINUS-OK: func.func @f() attributes {a = array<i64: -1, -1,
