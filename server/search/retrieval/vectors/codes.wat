;; Sums over the held vectors' codes with 128-bit SIMD, in one memory (codeMemory.js): the int8
;; codes held by row (rows.js), chosen rows or a scan of them, and a scan of the codes held by
;; column (columns.js), int8 or 4-bit. The memory is shared, so that helper threads scan a share of
;; it (helpers.js).
(module
  (import "codes" "memory" (memory 1 65536 shared))

  ;; The inner product of the $width int8 codes at $row ($width a multiple of 16) with the $width
  ;; i16 at $query. The caller keeps the sums within an i32 (rows.js).
  (func $product (param $query i32) (param $row i32) (param $width i32) (result i32)
    (local $j i32) (local $codes v128) (local $q i32) (local $s0 v128) (local $s1 v128)
    (block $done
      (loop $eachSixteen
        (br_if $done (i32.ge_u (local.get $j) (local.get $width)))
        (local.set $codes (v128.load (i32.add (local.get $row) (local.get $j))))
        (local.set $q (i32.add (local.get $query) (i32.shl (local.get $j) (i32.const 1))))
        (local.set $s0 (i32x4.add (local.get $s0) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $codes)) (v128.load (local.get $q)))))
        (local.set $s1 (i32x4.add (local.get $s1) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $codes)) (v128.load offset=16 (local.get $q)))))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $eachSixteen)))
    (local.set $s0 (i32x4.add (local.get $s0) (local.get $s1)))
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $s0)) (i32x4.extract_lane 1 (local.get $s0)))
      (i32.add (i32x4.extract_lane 2 (local.get $s0)) (i32x4.extract_lane 3 (local.get $s0)))))

  ;; For each of the $n rows whose addresses (i32) are at $rows, its product with the query at
  ;; $query, written as an i32 to $out.
  (func (export "products") (param $query i32) (param $rows i32) (param $n i32) (param $width i32) (param $out i32)
    (local $i i32)
    (block $done
      (loop $eachRow
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
          (call $product (local.get $query) (i32.load (i32.add (local.get $rows) (i32.shl (local.get $i) (i32.const 2)))) (local.get $width)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $eachRow))))

  ;; For the $count rows from $first, $width bytes apart, their products with the query at $query;
  ;; each row whose product is above $threshold is written to $list as (its index from $first,
  ;; the product), two i32. Returns how many were.
  (func (export "rowsAbove") (param $query i32) (param $first i32) (param $count i32) (param $width i32)
    (param $threshold i32) (param $list i32) (result i32)
    (local $i i32) (local $sum i32) (local $n i32)
    (block $done
      (loop $eachRow
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $sum (call $product (local.get $query) (i32.add (local.get $first) (i32.mul (local.get $i) (local.get $width))) (local.get $width)))
        (if (i32.gt_s (local.get $sum) (local.get $threshold))
          (then
            (i32.store (i32.add (local.get $list) (i32.shl (local.get $n) (i32.const 3))) (local.get $i))
            (i32.store offset=4 (i32.add (local.get $list) (i32.shl (local.get $n) (i32.const 3))) (local.get $sum))
            (local.set $n (i32.add (local.get $n) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $eachRow)))
    (local.get $n))

  ;; The scan by column: for rows [0, $count) ($count a multiple of 16), the sum over the $pairs
  ;; pairs p of qa * codeA[row] + qb * codeB[row], where $cols holds pair p's two column addresses
  ;; at 8p and 8p + 4 and $weights holds qa | qb << 16 (two i16) at 4p. A pair's bytes are
  ;; interleaved so that one i32x4.dot_i16x8_s multiplies and adds both columns' codes. Each row whose sum is
  ;; above $threshold is written to $list as (row, sum), two i32; returns how many were. $group:
  ;; 64 bytes for a group of sixteen sums that has one above.
  (func (export "above") (param $cols i32) (param $weights i32) (param $pairs i32) (param $count i32)
    (param $threshold i32) (param $list i32) (param $group i32) (result i32)
    (local $row i32) (local $p i32) (local $pair i32) (local $q v128) (local $t v128)
    (local $a v128) (local $b v128) (local $lo v128) (local $hi v128)
    (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128)
    (local $j i32) (local $sum i32) (local $n i32)
    (local.set $t (i32x4.splat (local.get $threshold)))
    (block $rowsDone
      (loop $rows
        (br_if $rowsDone (i32.ge_u (local.get $row) (local.get $count)))
        (local.set $s0 (v128.const i32x4 0 0 0 0))
        (local.set $s1 (v128.const i32x4 0 0 0 0))
        (local.set $s2 (v128.const i32x4 0 0 0 0))
        (local.set $s3 (v128.const i32x4 0 0 0 0))
        (local.set $p (i32.const 0))
        (block $pairsDone
          (loop $pairsLoop
            (br_if $pairsDone (i32.ge_u (local.get $p) (local.get $pairs)))
            (local.set $q (i32x4.splat (i32.load (i32.add (local.get $weights) (i32.shl (local.get $p) (i32.const 2))))))
            (local.set $pair (i32.add (local.get $cols) (i32.shl (local.get $p) (i32.const 3))))
            (local.set $a (v128.load (i32.add (i32.load (local.get $pair)) (local.get $row))))
            (local.set $b (v128.load (i32.add (i32.load offset=4 (local.get $pair)) (local.get $row))))
            (local.set $lo (i8x16.shuffle 0 16 1 17 2 18 3 19 4 20 5 21 6 22 7 23 (local.get $a) (local.get $b)))
            (local.set $hi (i8x16.shuffle 8 24 9 25 10 26 11 27 12 28 13 29 14 30 15 31 (local.get $a) (local.get $b)))
            (local.set $s0 (i32x4.add (local.get $s0) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $lo)) (local.get $q))))
            (local.set $s1 (i32x4.add (local.get $s1) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $lo)) (local.get $q))))
            (local.set $s2 (i32x4.add (local.get $s2) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $hi)) (local.get $q))))
            (local.set $s3 (i32x4.add (local.get $s3) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $hi)) (local.get $q))))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $pairsLoop)))
        ;; $s0..$s3 hold rows +0..3, +4..7, +8..11 and +12..15.
        (if (v128.any_true (v128.or
              (v128.or (i32x4.gt_s (local.get $s0) (local.get $t)) (i32x4.gt_s (local.get $s1) (local.get $t)))
              (v128.or (i32x4.gt_s (local.get $s2) (local.get $t)) (i32x4.gt_s (local.get $s3) (local.get $t)))))
          (then
            (v128.store offset=0 (local.get $group) (local.get $s0))
            (v128.store offset=16 (local.get $group) (local.get $s1))
            (v128.store offset=32 (local.get $group) (local.get $s2))
            (v128.store offset=48 (local.get $group) (local.get $s3))
            (local.set $j (i32.const 0))
            (block $groupDone
              (loop $groupLoop
                (br_if $groupDone (i32.ge_u (local.get $j) (i32.const 16)))
                (local.set $sum (i32.load (i32.add (local.get $group) (i32.shl (local.get $j) (i32.const 2)))))
                (if (i32.gt_s (local.get $sum) (local.get $threshold))
                  (then
                    (i32.store (i32.add (local.get $list) (i32.shl (local.get $n) (i32.const 3))) (i32.add (local.get $row) (local.get $j)))
                    (i32.store offset=4 (i32.add (local.get $list) (i32.shl (local.get $n) (i32.const 3))) (local.get $sum))
                    (local.set $n (i32.add (local.get $n) (i32.const 1)))))
                (local.set $j (i32.add (local.get $j) (i32.const 1)))
                (br $groupLoop)))))
        (local.set $row (i32.add (local.get $row) (i32.const 16)))
        (br $rows)))
    (local.get $n))

  ;; The scan of a sealed block's 4-bit codes by column (columns.js): for rows [0, $count) ($count a
  ;; multiple of 32), the sum over the $columns columns k of w[k] * code_k[row], where $cols holds
  ;; column k's address at 4k and $weights its weight (an i16) at 2k. A column keeps 32 rows in 16
  ;; bytes: the i16 lane j holds row 8n + j in its nibble n (0 lowest), unsigned. The caller keeps
  ;; the sums within an i16 (at most 15 times the weights' magnitudes). Each row whose sum is above
  ;; $threshold (an i16) is written to $list as (row, sum), two i32; returns how many were. $group:
  ;; 64 bytes for a group of 32 sums that has one above.
  (func (export "nibblesAbove") (param $cols i32) (param $weights i32) (param $columns i32) (param $count i32)
    (param $threshold i32) (param $list i32) (param $group i32) (result i32)
    (local $row i32) (local $half i32) (local $k i32) (local $w v128) (local $t v128) (local $low v128)
    (local $v v128) (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128)
    (local $j i32) (local $sum i32) (local $n i32)
    (local.set $t (i16x8.splat (local.get $threshold)))
    (local.set $low (i16x8.splat (i32.const 15)))
    (block $rowsDone
      (loop $rows
        (br_if $rowsDone (i32.ge_u (local.get $row) (local.get $count)))
        ;; A column's bytes for these rows: half as many as rows.
        (local.set $half (i32.shr_u (local.get $row) (i32.const 1)))
        (local.set $s0 (v128.const i32x4 0 0 0 0))
        (local.set $s1 (v128.const i32x4 0 0 0 0))
        (local.set $s2 (v128.const i32x4 0 0 0 0))
        (local.set $s3 (v128.const i32x4 0 0 0 0))
        (local.set $k (i32.const 0))
        (block $columnsDone
          (loop $columnsLoop
            (br_if $columnsDone (i32.ge_u (local.get $k) (local.get $columns)))
            (local.set $w (i16x8.splat (i32.load16_s (i32.add (local.get $weights) (i32.shl (local.get $k) (i32.const 1))))))
            (local.set $v (v128.load (i32.add (i32.load (i32.add (local.get $cols) (i32.shl (local.get $k) (i32.const 2)))) (local.get $half))))
            (local.set $s0 (i16x8.add (local.get $s0) (i16x8.mul (v128.and (local.get $v) (local.get $low)) (local.get $w))))
            (local.set $s1 (i16x8.add (local.get $s1) (i16x8.mul (v128.and (i16x8.shr_u (local.get $v) (i32.const 4)) (local.get $low)) (local.get $w))))
            (local.set $s2 (i16x8.add (local.get $s2) (i16x8.mul (v128.and (i16x8.shr_u (local.get $v) (i32.const 8)) (local.get $low)) (local.get $w))))
            (local.set $s3 (i16x8.add (local.get $s3) (i16x8.mul (i16x8.shr_u (local.get $v) (i32.const 12)) (local.get $w))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $columnsLoop)))
        ;; $s0..$s3 hold rows +0..7, +8..15, +16..23 and +24..31.
        (if (v128.any_true (v128.or
              (v128.or (i16x8.gt_s (local.get $s0) (local.get $t)) (i16x8.gt_s (local.get $s1) (local.get $t)))
              (v128.or (i16x8.gt_s (local.get $s2) (local.get $t)) (i16x8.gt_s (local.get $s3) (local.get $t)))))
          (then
            (v128.store offset=0 (local.get $group) (local.get $s0))
            (v128.store offset=16 (local.get $group) (local.get $s1))
            (v128.store offset=32 (local.get $group) (local.get $s2))
            (v128.store offset=48 (local.get $group) (local.get $s3))
            (local.set $j (i32.const 0))
            (block $groupDone
              (loop $groupLoop
                (br_if $groupDone (i32.ge_u (local.get $j) (i32.const 32)))
                (local.set $sum (i32.load16_s (i32.add (local.get $group) (i32.shl (local.get $j) (i32.const 1)))))
                (if (i32.gt_s (local.get $sum) (local.get $threshold))
                  (then
                    (i32.store (i32.add (local.get $list) (i32.shl (local.get $n) (i32.const 3))) (i32.add (local.get $row) (local.get $j)))
                    (i32.store offset=4 (i32.add (local.get $list) (i32.shl (local.get $n) (i32.const 3))) (local.get $sum))
                    (local.set $n (i32.add (local.get $n) (i32.const 1)))))
                (local.set $j (i32.add (local.get $j) (i32.const 1)))
                (br $groupLoop)))))
        (local.set $row (i32.add (local.get $row) (i32.const 32)))
        (br $rows)))
    (local.get $n))
)
