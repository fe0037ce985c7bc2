// RUN: dlc-opt %s --dlc-build-train-step --dlc-insert-gradient-allreduce --dlc-shard-optimizer-state=ranks=3 | FileCheck %s
// RUN: dlc-opt %s --dlc-build-train-step --dlc-insert-gradient-allreduce=bucket-bytes=64 --dlc-shard-optimizer-state=ranks=3 | FileCheck %s --check-prefix=SMALL
// RUN: dlc-opt %s --dlc-build-train-step --dlc-insert-gradient-allreduce --dlc-shard-optimizer-state=ranks=3 --dlc-shard-optimizer-state=ranks=3 | FileCheck %s --check-prefix=TWICE
// RUN: not dlc-opt %s --dlc-build-train-step --dlc-shard-optimizer-state=ranks=3 2>&1 | FileCheck %s --check-prefix=NOREDUCE
// RUN: not dlc-opt %s --dlc-shard-optimizer-state 2>&1 | FileCheck %s --check-prefix=NORANKS

// Over 3 ranks, the moments become shards of ceil(n / 3) elements (fc1's
// 8x3 weight: 8; its 8 biases: 3; fc2's 2x8 weight: 6; its 2 biases: 1);
// the step count stays whole.
// CHECK: dlc.parameter @optimizer.step : tensor<f32>
// CHECK-SAME: role = #dlc.role<optimizer_state>}
// CHECK: dlc.parameter @optimizer.fc1.weight.exp_avg : tensor<8xf32>
// CHECK-SAME: shard_of = array<i64: 8, 3>, shard_ranks = 3 : i64
// CHECK: dlc.parameter @optimizer.fc1.bias.exp_avg : tensor<3xf32>
// CHECK-SAME: shard_of = array<i64: 8>, shard_ranks = 3 : i64
// CHECK: dlc.parameter @optimizer.fc2.weight.exp_avg : tensor<6xf32>
// CHECK: dlc.parameter @optimizer.fc2.bias.exp_avg : tensor<1xf32>
// CHECK-SAME: shard_of = array<i64: 2>
// CHECK: dlc.parameter @optimizer.fc1.weight.exp_avg_sq : tensor<8xf32>

// The bucket is reduce-scattered where it was all-reduced (its shards in
// fresh tensors); the update reads the rank's shards of the params, the
// gradients and the state; the new params are gathered into the params.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[L:.*]] = dlc.mse_loss
// CHECK: %[[E0:.*]] = bufferization.alloc_tensor() : tensor<1xf32>
// CHECK: %[[E3:.*]] = bufferization.alloc_tensor() : tensor<8xf32>
// CHECK: %[[G:.*]]:4 = dlc.reduce_scatter %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %[[E0]], %{{.*}}, %{{.*}}, %[[E3]] {ranks = 3 : i64} : tensor<2xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8x3xf32> into tensor<1xf32>, tensor<6xf32>, tensor<3xf32>, tensor<8xf32>
// CHECK-NOT: dlc.all_reduce
// CHECK: %[[P:.*]]:4 = dlc.shard %[[W1:.*]], %[[B1:.*]], %[[W2:.*]], %[[B2:.*]] into {{.*}} {ranks = 3 : i64} : tensor<8x3xf32>, tensor<8xf32>, tensor<2x8xf32>, tensor<2xf32> into tensor<8xf32>, tensor<3xf32>, tensor<6xf32>, tensor<1xf32>
// CHECK: %[[U:.*]]:13 = dlc.optimizer_update step(%{{.*}} : tensor<f32>) params(%[[P]]#0, %[[P]]#1, %[[P]]#2, %[[P]]#3 : tensor<8xf32>, tensor<3xf32>, tensor<6xf32>, tensor<1xf32>) grads(%[[G]]#3, %[[G]]#2, %[[G]]#1, %[[G]]#0 :
// CHECK-SAME: states(%{{.*}} : tensor<8xf32>, tensor<3xf32>, tensor<6xf32>, tensor<1xf32>, tensor<8xf32>, tensor<3xf32>, tensor<6xf32>, tensor<1xf32>)
// CHECK: %[[A:.*]]:4 = dlc.all_gather %[[U]]#4, %[[U]]#3, %[[U]]#2, %[[U]]#1 into %[[B2]], %[[W2]], %[[B1]], %[[W1]] {ranks = 3 : i64}
// CHECK: dlc.assign @fc1.weight, %[[A]]#3 : tensor<8x3xf32>
// CHECK: dlc.assign @optimizer.fc1.weight.exp_avg, %[[U]]#5 : tensor<8xf32>
// CHECK: dlc.assign @optimizer.step, %[[U]]#0 : tensor<f32>
// CHECK: %[[LR:.*]] = dlc.all_reduce %[[L]] : tensor<f32>
// CHECK-NEXT: return %[[LR]]

// Four buckets: four reduce-scatters, one all-gather per bucket.
// SMALL-LABEL: func.func @train_step
// SMALL-COUNT-4: dlc.reduce_scatter
// SMALL: dlc.optimizer_update
// SMALL-COUNT-4: dlc.all_gather
// SMALL: dlc.all_reduce %{{[0-9]+}} : tensor<f32>

// Running it again changes nothing.
// TWICE-COUNT-1: dlc.reduce_scatter
// TWICE-NOT: dlc.reduce_scatter

// NOREDUCE: error: 'dlc.optimizer_update' op reads a gradient that is not all-reduced
// NOREDUCE: note: run dlc-insert-gradient-allreduce first
// NORANKS: error: dlc-shard-optimizer-state needs ranks >= 1, not 0
module attributes {dlc.optimizer = {kind = #dlc.optimizer<adam>, lr = 1.0e-03 : f64, betas = [0.9, 0.999], eps = 1.0e-08 : f64, weight_decay = 0.0 : f64, amsgrad = false}} {
  dlc.parameter @fc1.weight : tensor<8x3xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  dlc.parameter @fc1.bias : tensor<8xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  dlc.parameter @fc2.weight : tensor<2x8xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  dlc.parameter @fc2.bias : tensor<2xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}, %t: tensor<4x2xf32> {dlc.name = "y"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %w1 = dlc.param @fc1.weight : tensor<8x3xf32>
    %b1 = dlc.param @fc1.bias : tensor<8xf32>
    %w2 = dlc.param @fc2.weight : tensor<2x8xf32>
    %b2 = dlc.param @fc2.bias : tensor<2xf32>
    %h = dlc.linear %x, %w1, %b1 {activation = #dlc.activation<relu>} : (tensor<4x3xf32>, tensor<8x3xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %y = dlc.linear %h, %w2, %b2 : (tensor<4x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<4x2xf32>
    %l = dlc.mse_loss %y, %t : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
