"""The device groups of a collective in XLA's three forms, and the mesh
axes they run over."""

from kerasmesh.cost import replica_groups


def test_replica_groups_parse_in_all_three_forms():
    explicit = "replica_groups={{0,4},{1,5},{2,6},{3,7}}, use_global"
    iota = "replica_groups=[4,2]<=[2,4]T(1,0), use_global"
    meshed = "replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_0'}, x"
    groups = [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert replica_groups.device_groups(explicit, 8) == groups
    assert replica_groups.device_groups(iota, 8) == groups
    assert replica_groups.device_groups(meshed, 8) == groups
    assert replica_groups.device_groups("replica_groups=[2,4]<=[8]", 8) == \
        [[0, 1, 2, 3], [4, 5, 6, 7]]
    # A sub-axis: the major half of 'axis_1' (size 4 = 2 x 2).
    sub = "replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_1':(1)2}"
    assert replica_groups.device_groups(sub, 8) == [[0, 2], [1, 3], [4, 6], [5, 7]]
    assert replica_groups.group_axes(groups, [2, 4], ["data", "model"]) == ["data"]
    assert replica_groups.group_axes([[0, 1, 2, 3, 4, 5, 6, 7]], [2, 4],
                          ["data", "model"]) == ["data", "model"]
