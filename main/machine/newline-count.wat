;; Counts the newlines (\n, byte 10) in memory[p, p + n): the read buffer lives in this module's
;; memory, so a count never copies it. Built into dist/wasm/newline-count.wasm by
;; scripts/build-wasm.ts; main/machine/newline-scanner.ts loads it.
(module
  (func $count (param $p i32) (param $n i32) (result i32)
    (local $end i32) (local $count i32) (local $nl v128)
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (local.set $nl (i8x16.splat (i32.const 10)))
    ;; 64 bytes a step, as four 16-byte vectors: compare each byte with \n, take the comparison's
    ;; bitmask (one bit a byte), two masks to an i32, and count the bits set.
    (block $whole
      (loop $step
        (br_if $whole (i32.gt_u (i32.add (local.get $p) (i32.const 64)) (local.get $end)))
        (local.set $count
          (i32.add
            (i32.add
              (local.get $count)
              (i32.popcnt
                (i32.or
                  (i8x16.bitmask (i8x16.eq (v128.load offset=0 align=1 (local.get $p)) (local.get $nl)))
                  (i32.shl
                    (i8x16.bitmask (i8x16.eq (v128.load offset=16 align=1 (local.get $p)) (local.get $nl)))
                    (i32.const 16)))))
            (i32.popcnt
              (i32.or
                (i8x16.bitmask (i8x16.eq (v128.load offset=32 align=1 (local.get $p)) (local.get $nl)))
                (i32.shl
                  (i8x16.bitmask (i8x16.eq (v128.load offset=48 align=1 (local.get $p)) (local.get $nl)))
                  (i32.const 16))))))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (br $step)))
    ;; The last 0 to 63 bytes, one at a time.
    (block $rest
      (loop $byte
        (br_if $rest (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $count (i32.add (local.get $count) (i32.eq (i32.load8_u (local.get $p)) (i32.const 10))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $byte)))
    (local.get $count))
  ;; 16 pages of 64 KiB: one 1 MiB read buffer (SCAN_BUFFER_BYTES).
  (memory $buffer 16)
  (export "count" (func $count))
  (export "memory" (memory $buffer)))
