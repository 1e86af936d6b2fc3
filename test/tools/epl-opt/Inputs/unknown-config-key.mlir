module attributes {epl.config = {"pipeline.num_micro_batches" = 4 : i64}} {
}
