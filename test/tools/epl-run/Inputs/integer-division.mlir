// The input of integer-division.test: a division by a constant that
// cannot fail, one by data (linalg.div), and a remainder by data.
module {
  func.func @main(%a: tensor<4xi32> {epl.name = "a"}, %b: tensor<4xi32> {epl.name = "b"}) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
    %two = arith.constant 2 : i32
    %e = tensor.empty() : tensor<4xi32>
    %h = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}
        ins(%a : tensor<4xi32>) outs(%e : tensor<4xi32>) {
    ^bb0(%x: i32, %o: i32):
      %q = arith.divsi %x, %two : i32
      linalg.yield %q : i32
    } -> tensor<4xi32>
    %r = linalg.div ins(%a, %b : tensor<4xi32>, tensor<4xi32>) outs(%e : tensor<4xi32>) -> tensor<4xi32>
    %m = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}
        ins(%a, %b : tensor<4xi32>, tensor<4xi32>) outs(%e : tensor<4xi32>) {
    ^bb0(%x: i32, %y: i32, %o: i32):
      %q = arith.remsi %x, %y : i32
      linalg.yield %q : i32
    } -> tensor<4xi32>
    return %r, %h, %m : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
  }
}
