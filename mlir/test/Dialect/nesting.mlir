// Input nested deeper than fxmlir's limit (256 levels, all brackets counted
// together) is refused with a located error instead of overflowing the
// parser's stack; within the limit it parses.
// RUN: python3 -c "print('func.func @f() attributes {a = ' + '[' * 7000 + ']' * 7000 + '} { return }')" > %t.deep.mlir
// RUN: not fxmlir-opt %t.deep.mlir 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: python3 -c "print('func.func @f(%%x: ' + 'tuple<' * 20000 + 'i32' + '>' * 20000 + ') { return }')" | not fxmlir-opt 2>&1 | FileCheck %s --check-prefix=STDIN
// RUN: python3 -c "print('func.func @f() attributes {a = ' + '[' * 250 + ']' * 250 + '} { return }')" | fxmlir-opt | FileCheck %s --check-prefix=OK

// DEEP: deep.mlir:1:287: error: input nests brackets, braces, parentheses and angle brackets more than 256 levels deep
// STDIN: <stdin>:1:{{[0-9]+}}: error: input nests {{.*}} more than 256 levels deep
// OK: func.func @f() attributes {a = {{\[+}}
